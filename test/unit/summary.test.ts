// The first sync of a settled application after a restart (core/summary.ts): answered from the
// model's summary (the lattice's list) and its status, with the answer a read of the whole model
// gives, and only where the resource's own status attests the version deployed in a model of ours.
// (How Knowledge keeps a lattice's list for it: census.test.ts.)
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { callOf } from '../../src/core/application.js';
import { decideSync } from '../../src/core/decide.js';
import type { Action } from '../../src/core/facts.js';
import { defaultOnly } from '../../src/core/tenancy.js';
import { MemoryLattice } from '../support/memory-lattice.js';
import { hookRequest, wasmApp, type Resource } from '../support/resources.js';

const TENANCY = defaultOnly('default');
const NOW = Date.parse('2026-11-30T12:00:00Z');
const kinds = (actions: Action[]) => actions.map((a) => a.kind);

function sync(lattice: MemoryLattice, parent: Resource, options: Parameters<typeof hookRequest>[1] = {}) {
  return lattice.run(decideSync, callOf(hookRequest(parent, options), TENANCY, { now: NOW }));
}

/** A settled application: put, deployed, reported deployed by wadm, and its status as Metacontroller hands it back. */
async function settled(parent = wasmApp().build()) {
  const lattice = new MemoryLattice();
  const first = await sync(lattice, parent);
  lattice.setStatus('hello-world', { status: { type: 'deployed' } });
  const status = (await sync(lattice, parent, { status: first.response.status })).response.status;
  assert.equal(status.phase, 'Deployed', 'settled before the restart');
  return { lattice, status };
}

/** The same call, with the summary withheld: what a read of the whole model answers. */
async function withoutSummary(lattice: MemoryLattice, parent: Resource, options: Parameters<typeof hookRequest>[1]) {
  lattice.scripted.push({ kind: 'read-summary', result: { kind: 'summary', summary: null } });
  return sync(lattice, parent, options);
}

describe('a settled application whose status attests its version deployed', () => {
  it('is answered from its summary and status, byte for byte as a read of the whole model answers, with no write', async () => {
    const { lattice, status } = await settled();
    const run = await sync(lattice, wasmApp().build(), { status });
    assert.deepEqual(kinds(run.actions), ['read-summary', 'read-status']);
    assert.deepEqual(run.facts.writes, []);
    const full = await withoutSummary(lattice, wasmApp().build(), { status });
    assert.deepEqual(kinds(full.actions), ['read-summary', 'read-model', 'read-status']);
    assert.equal(JSON.stringify(run.response), JSON.stringify(full.response));
    assert.equal(JSON.stringify(run.response.status), JSON.stringify(status), 'no status change');
  });

  it('with several versions, needs no read of the oldest (which a model read would need)', async () => {
    const { lattice, status } = await settled();
    // An edit: the model holds two versions, the newest deployed.
    const edited = wasmApp().build();
    (edited.spec as { description?: string }).description = 'edited';
    const deploying = (await sync(lattice, edited, { status, generation: 2 })).response.status;
    lattice.setStatus('hello-world', { status: { type: 'deployed' } });
    const again = (await sync(lattice, edited, { status: deploying, generation: 2 })).response.status;
    assert.equal(lattice.model('hello-world')!.versions.size, 2);
    const run = await sync(lattice, edited, { status: again, generation: 2 });
    assert.deepEqual(kinds(run.actions), ['read-summary', 'read-status']);
    const full = await withoutSummary(lattice, edited, { status: again, generation: 2 });
    assert.deepEqual(kinds(full.actions), ['read-summary', 'read-model', 'read-version', 'read-status']);
    assert.equal(JSON.stringify(run.response), JSON.stringify(full.response));
  });

  it('reads the model after a rollback: the newest version is not the one deployed', async () => {
    const { lattice, status } = await settled();
    const edited = wasmApp().build();
    (edited.spec as { description?: string }).description = 'edited';
    const afterEdit = (await sync(lattice, edited, { status, generation: 2 })).response.status;
    const back = (await sync(lattice, wasmApp().build(), { status: afterEdit, generation: 3 })).response.status;
    lattice.setStatus('hello-world', { status: { type: 'deployed' } });
    const settledBack = (await sync(lattice, wasmApp().build(), { status: back, generation: 3 })).response.status;
    const run = await sync(lattice, wasmApp().build(), { status: settledBack, generation: 3 });
    assert.deepEqual(kinds(run.actions).slice(0, 2), ['read-summary', 'read-model']);
    assert.equal(run.response.status.phase, 'Deployed');
  });

  it('reads the model when the summary says otherwise: another newest version, another deployed one, or none', async () => {
    for (const change of [
      (l: MemoryLattice) => l.model('hello-world')!.versions.set('oob-1', { owner: null, contentHash: null }),
      (l: MemoryLattice) => void (l.model('hello-world')!.deployed = null),
      (l: MemoryLattice) => void l.models.delete('hello-world'),
    ]) {
      const { lattice, status } = await settled();
      change(lattice);
      const run = await sync(lattice, wasmApp().build(), { status });
      assert.deepEqual(kinds(run.actions).slice(0, 2), ['read-summary', 'read-model']);
    }
  });
});

describe('the summary is not read', () => {
  const cases: [string, (status: Record<string, unknown>) => { parent: Resource; options: Parameters<typeof hookRequest>[1] }][] = [
    ['for a new application', () => ({ parent: wasmApp().build(), options: {} })],
    ['after an edit (a new generation)', (status) => ({ parent: wasmApp().build(), options: { status, generation: 2 } })],
    ['for a pinned version, which names no content', (status) => ({ parent: wasmApp().pinned('v1').build(), options: { status } })],
    ['while suspended', (status) => ({ parent: wasmApp().suspended().build(), options: { status } })],
    ['during a move', (status) => ({ parent: wasmApp().inLattice('other').build(), options: { status } })],
    [
      'when the status names another version',
      (status) => ({ parent: wasmApp().build(), options: { status: { ...status, deployedVersion: 'sha-0000000000000000' } } }),
    ],
    [
      'when the status is a refusal (no deployed version of ours attested)',
      (status) => ({
        parent: wasmApp().build(),
        options: { status: { ...status, conditions: [{ type: 'Ready', status: 'False', reason: 'OwnershipConflict' }] } },
      }),
    ],
  ];
  for (const [when, make] of cases)
    it(when, async () => {
      const { lattice, status } = await settled();
      const { parent, options } = make(status as unknown as Record<string, unknown>);
      const run = await lattice.run(decideSync, callOf(hookRequest(parent, options), defaultOrAny(parent), { now: NOW }));
      assert.ok(!kinds(run.actions).includes('read-summary'), `${when}: ${kinds(run.actions).join(', ')}`);
    });
});

/** A policy that lets the application use whatever lattice it names (a move is to "other"). */
function defaultOrAny(parent: Resource) {
  const lattice = (parent.spec as { lattice?: string }).lattice;
  return lattice === undefined ? TENANCY : { ...TENANCY, allows: () => true, rule: 'policy' as const };
}
