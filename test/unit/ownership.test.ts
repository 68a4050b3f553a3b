// Ownership by history and drift healing, in the core: a model is ours when its oldest version
// carries our owner annotation (or, that naming none, when any version does); a version deployed
// outside Kubernetes is replaced at the next sync; writes are decided on what wadm said during the
// call, never on remembered facts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { callOf } from '../../src/core/application.js';
import { decideFinalize, decideSync } from '../../src/core/decide.js';
import type { Action, ModelFacts } from '../../src/core/facts.js';
import { defaultOnly } from '../../src/core/tenancy.js';
import { MemoryLattice } from '../support/memory-lattice.js';
import { wasmApp, hookRequest, type Resource } from '../support/resources.js';

const TENANCY = defaultOnly('default');
const NOW = Date.parse('2026-11-30T12:00:00Z');
const OURS = 'default/hello-world';
const kinds = (actions: Action[]) => actions.map((a) => a.kind);

function sync(lattice: MemoryLattice, parent: Resource = wasmApp().build(), status?: unknown) {
  return lattice.run(decideSync, callOf(hookRequest(parent, { status }), TENANCY, { now: NOW }));
}

async function deployedApp() {
  const lattice = new MemoryLattice();
  const first = await sync(lattice);
  lattice.setStatus('hello-world', { status: { type: 'deployed' } });
  const settled = await sync(lattice, wasmApp().build(), first.response.status);
  return { lattice, version: first.response.status.version!, status: settled.response.status };
}

describe('a version put outside Kubernetes on our model', () => {
  it('leaves the model ours: the answer stays Deployed, whichever version is newest', async () => {
    const { lattice, version, status } = await deployedApp();
    lattice.model('hello-world')!.versions.set('oob-1', { owner: null, contentHash: null });
    const run = await sync(lattice, wasmApp().build(), status);
    assert.equal(run.response.status.phase, 'Deployed');
    assert.equal(run.response.status.deployedVersion, version);
    // The lattice's list shows another newest version, so the model is read; the newest is
    // foreign, so the deployed version is read to find our annotation.
    assert.deepEqual(kinds(run.actions), ['read-summary', 'read-model', 'read-version', 'read-status']);
  });

  it('when also deployed, is drift: our version is deployed again and the message says what wadm had', async () => {
    const { lattice, version, status } = await deployedApp();
    const model = lattice.model('hello-world')!;
    model.versions.set('oob-1', { owner: null, contentHash: null });
    model.deployed = 'oob-1';
    const run = await sync(lattice, wasmApp().build(), status);
    assert.deepEqual(kinds(run.actions), ['read-summary', 'read-model', 'read-version', 'deploy']);
    assert.equal(model.deployed, version);
    assert.deepEqual(run.facts.writes, [{ kind: 'deploy', version, replacing: { deployed: 'oob-1' } }]);
    assert.equal(
      run.response.status.message,
      `wadm had version oob-1 deployed outside Kubernetes; redeployed version ${version}; waiting for wadm to report its status`,
    );
  });

  it('an undeploy outside Kubernetes is drift too, told apart from resuming after suspend', async () => {
    const { lattice, version, status } = await deployedApp();
    lattice.model('hello-world')!.deployed = null;
    const healed = await sync(lattice, wasmApp().build(), status);
    assert.deepEqual(healed.facts.writes, [{ kind: 'deploy', version, replacing: { deployed: null } }]);
    assert.match(healed.response.status.message!, /^wadm had nothing deployed \(undeployed outside Kubernetes\); redeployed/);

    lattice.model('hello-world')!.deployed = null;
    const resumed = await sync(lattice, wasmApp().build(), { phase: 'Suspended' });
    assert.deepEqual(resumed.facts.writes, [{ kind: 'deploy', version }]);
  });

  it('is deleted with the model on finalize: the whole model goes', async () => {
    const { lattice } = await deployedApp();
    lattice.model('hello-world')!.versions.set('oob-1', { owner: null, contentHash: null });
    const run = await lattice.run(decideFinalize, callOf(hookRequest(wasmApp().build(), { finalizing: true }), TENANCY, { now: NOW }));
    assert.equal(run.response.finalized, true);
    assert.equal(lattice.model('hello-world'), undefined);
    assert.deepEqual(run.facts.writes, [{ kind: 'delete', version: null }]);
  });
});

describe('a model that is not ours', () => {
  it('is refused after reading its versions, when none carries our owner', async () => {
    const lattice = new MemoryLattice();
    lattice.seed(
      'hello-world',
      [
        ['a', { owner: null, contentHash: null }],
        ['b', { owner: 'default/other', contentHash: null }],
        ['c', { owner: null, contentHash: null }],
      ],
      'a',
    );
    const run = await sync(lattice);
    assert.deepEqual(kinds(run.actions), ['read-model', 'read-version', 'read-version']);
    assert.equal(run.response.status.conditions![0]!.reason, 'OwnershipConflict');
    // Same namespace: naming the owner helps and leaks nothing.
    assert.match(run.response.status.message!, /belongs to default\/other/);
    assert.equal(lattice.model('hello-world')!.deployed, 'a');
  });

  it('is left in wadm by finalize', async () => {
    const lattice = new MemoryLattice();
    lattice.seed('hello-world', [['a', { owner: 'elsewhere/hello-world', contentHash: null }]], 'a');
    const run = await lattice.run(decideFinalize, callOf(hookRequest(wasmApp().build(), { finalizing: true }), TENANCY, { now: NOW }));
    assert.equal(run.response.finalized, true);
    assert.equal(run.response.status.conditions![0]!.reason, 'NotOwned');
    assert.match(run.response.status.message!, /belongs to a resource in another namespace/);
    assert.ok(lattice.model('hello-world'));
  });
});

describe('remembered facts', () => {
  it('answer a settled sync, but a write first asks wadm again', async () => {
    const { lattice, version } = await deployedApp();
    const remembered: ModelFacts = {
      versions: [version],
      deployedVersion: version,
      known: { [version]: { version, owner: OURS, contentHash: null } },
      remembered: true,
    };
    lattice.scripted.push({ kind: 'read-model', result: { kind: 'model', model: remembered } });
    const hello = wasmApp().build();
    const edit = await sync(lattice, { ...hello, spec: { ...hello.spec, description: 'edited' } });
    assert.deepEqual(kinds(edit.actions), ['read-model', 'read-model', 'put', 'deploy']);
    assert.deepEqual(edit.actions[1], { kind: 'read-model', fresh: true });
  });
});

describe('what is counted as done', () => {
  it('only writes wadm confirmed; a write that could not be sent is a failure with its reason', async () => {
    const lattice = new MemoryLattice();
    lattice.scripted.push({ kind: 'deploy', result: { kind: 'unavailable', reason: 'NoResponders', message: 'no wadm is listening' } });
    const run = await sync(lattice);
    assert.deepEqual(kinds(run.facts.writes), ['put']);
    assert.deepEqual(
      run.facts.failed.map((f) => [f.write.kind, f.reason]),
      [['deploy', 'NoResponders: no wadm is listening']],
    );
    assert.equal(run.response.status.conditions![0]!.reason, 'LatticeUnavailable');
  });
});

describe('a manifest larger than NATS allows', () => {
  it('is a spec problem: Stalled ManifestTooLarge with both sizes, nothing sent, normal resync pace', async () => {
    const lattice = new MemoryLattice();
    const run = await lattice.run(decideSync, callOf(hookRequest(wasmApp().build()), TENANCY, { now: NOW, maxPayloadBytes: 500 }));
    assert.deepEqual(run.actions, []);
    const { status } = run.response;
    assert.equal(status.phase, 'Invalid');
    assert.deepEqual(
      status.conditions!.map((c) => [c.type, c.status, c.reason]),
      [
        ['Ready', 'False', 'ManifestTooLarge'],
        ['Stalled', 'True', 'ManifestTooLarge'],
      ],
    );
    assert.match(status.message!, /is \d+ bytes, more than the NATS server's max_payload of 500 bytes/);
    assert.equal(run.response.resyncAfterSeconds, undefined);
  });
});
