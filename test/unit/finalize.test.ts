import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resyncJitter } from '../../src/core/status.js';
import { decideFinalize, decideSync } from '../../src/core/decide.js';
import { callOf } from '../../src/core/application.js';
import { defaultOnly } from '../../src/core/tenancy.js';
import { grantFor } from '../../src/lattice/subjects.js';

const NOW = Date.parse('2026-11-30T12:00:00Z');
const TENANCY = defaultOnly('default');
import { MemoryLattice } from '../support/memory-lattice.js';
import { wasmApp, hookRequest, type Resource } from '../support/resources.js';

const finalize = (lattice: MemoryLattice, parent: Resource) =>
  lattice.run(decideFinalize, callOf(hookRequest(parent, { finalizing: true }), TENANCY, { now: NOW }));

async function deployed(parent: Resource = wasmApp().build()) {
  const lattice = new MemoryLattice();
  await lattice.run(decideSync, callOf(hookRequest(parent), TENANCY, { now: NOW }));
  assert.ok(lattice.model('hello-world'));
  return lattice;
}

describe('finalize', () => {
  it('deletes every version of an owned model and answers finalized: true once wadm confirms', async () => {
    const lattice = await deployed();
    const run = await finalize(lattice, wasmApp().build());
    assert.deepEqual(run.actions, [{ kind: 'read-model' }, { kind: 'delete', version: null }]);
    assert.equal(run.response.finalized, true);
    assert.equal(lattice.model('hello-world'), undefined);
  });

  it('answers finalized: true without touching wadm when deletionPolicy is Orphan', async () => {
    const lattice = await deployed();
    const run = await finalize(lattice, wasmApp().with({ deletionPolicy: 'Orphan' }).build());
    assert.deepEqual(run.actions, []);
    assert.equal(run.response.finalized, true);
    assert.ok(lattice.model('hello-world'));
  });

  it('honours Orphan even when the rest of the spec is invalid', async () => {
    const lattice = await deployed();
    const run = await finalize(lattice, wasmApp().with({ deletionPolicy: 'Orphan', components: 'broken' }).build());
    assert.equal(run.response.finalized, true);
    assert.ok(lattice.model('hello-world'));
  });

  it('still deletes an owned model when the spec has become invalid', async () => {
    const lattice = await deployed();
    const run = await finalize(lattice, wasmApp().with({ components: 'broken' }).build());
    assert.equal(run.response.finalized, true);
    assert.equal(lattice.model('hello-world'), undefined);
  });

  it('leaves a model owned by another resource alone and lets the resource go', async () => {
    const lattice = await deployed(wasmApp().inNamespace('team-a').build());
    const run = await finalize(lattice, wasmApp().inNamespace('team-b').build());
    assert.deepEqual(run.actions, [{ kind: 'read-model' }]);
    assert.equal(run.response.finalized, true);
    assert.ok(lattice.model('hello-world'));
    assert.match(run.response.status.message!, /belongs to a resource in another namespace/);
    assert.doesNotMatch(JSON.stringify(run.response), /team-a/);
  });

  it('answers finalized: true when there is nothing in wadm', async () => {
    const run = await finalize(new MemoryLattice(), wasmApp().build());
    assert.equal(run.response.finalized, true);
  });

  it('answers finalized: false with a resync while wadm cannot be reached', async () => {
    const lattice = await deployed();
    lattice.down = true;
    const run = await finalize(lattice, wasmApp().build());
    assert.equal(run.response.finalized, false);
    assert.equal(run.response.resyncAfterSeconds, resyncJitter(5, 'default/hello-world'));
    assert.equal(run.response.status.conditions![0]!.reason, 'LatticeUnavailable');
  });

  it('answers finalized: false when wadm refuses the delete', async () => {
    const lattice = await deployed();
    lattice.scripted.push({ kind: 'delete', result: { kind: 'rejected', message: 'nope' } });
    const run = await finalize(lattice, wasmApp().build());
    assert.equal(run.response.finalized, false);
    assert.ok(run.response.resyncAfterSeconds! > 0);
  });

  it('keeps the finalizer while NATS refuses the lattice, naming what to grant and the way out; Orphan lets go', async () => {
    const lattice = await deployed();
    const refused = `NATS refused this service's user to publish to "wadm.api.default.model.versions.hello-world" (permissions violation); grant it ${grantFor('wadm.api', 'default')} (see SECURITY.md)`;
    lattice.scripted.push({ kind: 'read-model', result: { kind: 'unavailable', reason: 'NotPermitted', message: refused } });
    const run = await finalize(lattice, wasmApp().build());
    assert.equal(run.response.finalized, false);
    assert.equal(run.response.resyncAfterSeconds, resyncJitter(60, 'default/hello-world'));
    assert.equal(run.response.status.conditions![0]!.reason, 'LatticeNotPermitted');
    assert.equal(
      run.response.status.message,
      `Cannot delete in lattice "default": ${refused}; the finalizer stays until that is granted ` +
        '(to leave the application in wadm instead, set spec.deletionPolicy to Orphan or remove the finalizer by hand); will retry',
    );
    assert.ok(lattice.model('hello-world')!.deployed, 'nothing was deleted, nothing let go');
    const orphaned = await finalize(lattice, wasmApp().with({ deletionPolicy: 'Orphan' }).build());
    assert.deepEqual([orphaned.actions, orphaned.response.finalized], [[], true]);
  });

  it('lets a resource whose name could never reach wadm go at once', async () => {
    const run = await finalize(new MemoryLattice(), wasmApp.scratch().named('my.app').with({ components: [] }).build());
    assert.deepEqual(run.actions, []);
    assert.equal(run.response.finalized, true);
  });
});
