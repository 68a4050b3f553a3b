// An application that wadm cannot place says, in its own status, which spread requirement no host
// meets and which labels the lattice's hosts have: from the hosts heard (no wadm request), only
// when the service listens to the lattice (a WasmCloudLattice names it), naming nothing of any other
// application, whichever namespace it is in.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { callOf } from '../../src/core/application.js';
import { decideSync } from '../../src/core/decide.js';
import type { HostFacts, HostsView } from '../../src/core/lattice-hosts.js';
import { spreadRequirements } from '../../src/core/placement.js';
import { defaultOnly } from '../../src/core/tenancy.js';
import { MemoryLattice } from '../support/memory-lattice.js';
import { hookRequest, wasmApp } from '../support/resources.js';
import type { ApplicationSpec } from '../../src/schema/application.js';

const NOW = Date.parse('2026-11-30T12:00:00Z');
const CONFLICT = 'Spread requirement conflict: the-moon spread requires 1 instances vs 0 computed from reconciliation commands';

function host(n: number, labels: Record<string, string>, applications: string[] = []): HostFacts {
  return {
    id: `N${n}`,
    friendlyName: `host-${n}`,
    labels: { 'hostcore.os': 'linux', ...labels },
    labelsOmitted: 0,
    version: '1.9.2',
    uptimeSeconds: 60,
    sentAt: '2026-11-30T11:59:59Z',
    heardAt: NOW - 1000,
    periodMs: 30_000,
    components: applications.length,
    providers: 0,
    applications,
  };
}

const heard = (hosts: HostFacts[], since = NOW - 600_000): HostsView => ({
  watching: true,
  since,
  hosts,
  untracked: false,
  defaultPeriodMs: 30_000,
});

/** complex.yaml (its spreads ask for region us-brooks-east, us-taylor-west and moon), deployed, and wadm failing it. */
async function failedPlacement(hosts: HostsView | null, message = CONFLICT) {
  const lattice = new MemoryLattice();
  lattice.hosts = hosts;
  const parent = wasmApp('complex.yaml').build();
  const call = () => callOf(hookRequest(parent), defaultOnly('default'), { now: NOW });
  await lattice.run(decideSync, call());
  lattice.setStatus(parent.metadata.name, { status: { type: 'failed', message } });
  return lattice.run(decideSync, call());
}

describe('an application no host can place', () => {
  it('says which requirements no host meets and what labels the hosts have, asking wadm nothing more', async () => {
    const hosts = heard([host(1, { region: 'us-taylor-west' }, ['secret-app-of-team-b']), host(2, { region: 'eu-west' })]);
    const run = await failedPlacement(hosts);
    assert.deepEqual(
      run.actions.map((a) => a.kind),
      ['read-model', 'read-status', 'read-hosts'],
    );
    const { message, conditions } = run.response.status;
    assert.equal(conditions?.[0]?.reason, 'ScalerFailed');
    assert.equal(
      message,
      `${CONFLICT}; no host of lattice "default" has region=us-brooks-east (spread "eastcoast" of blobby), nor region=moon (spread "the-moon" of httpserver, spread "the-moon" of fileserver); ` +
        'the 2 hosts of lattice "default" have hostcore.os=linux (2 hosts), region=eu-west (1 host), region=us-taylor-west (1 host)',
    );
    assert.doesNotMatch(
      JSON.stringify(run.response.status),
      /secret-app-of-team-b/,
      "what other applications run is not this resource's to know",
    );
  });

  it('says only what wadm says when the service does not listen to the lattice (no WasmCloudLattice names it)', async () => {
    const run = await failedPlacement(null);
    assert.equal(run.response.status.message, CONFLICT);
  });

  it('says no host heartbeats when none does, and "heard so far" while it has listened for less than a period', async () => {
    assert.match((await failedPlacement(heard([]))).response.status.message!, /; no host of lattice "default" heartbeats$/);
    const listening = await failedPlacement(heard([host(1, { region: 'moon' })], NOW - 5000));
    assert.match(
      listening.response.status.message!,
      /the 1 host heard so far of lattice "default" have hostcore\.os=linux \(1 host\), region=moon \(1 host\)$/,
    );
  });

  it('leaves a failure that is not about placement alone', async () => {
    const run = await failedPlacement(heard([host(1, {})]), 'component crashed');
    assert.equal(run.response.status.message, 'component crashed');
    assert.ok(!run.actions.some((a) => a.kind === 'read-hosts'));
  });
});

describe('the spread requirements of a spec', () => {
  it('are those of spreadscalers and daemonscalers that name requirements', () => {
    const spec = wasmApp('complex.yaml').build().spec as unknown as ApplicationSpec;
    assert.deepEqual(
      spreadRequirements(spec).map((s) => `${s.component}/${s.spread}`),
      ['blobby/eastcoast', 'blobby/westcoast', 'httpserver/westcoast', 'httpserver/the-moon', 'fileserver/the-moon'],
    );
    assert.deepEqual(spreadRequirements(wasmApp().build().spec as unknown as ApplicationSpec), []);
  });
});
