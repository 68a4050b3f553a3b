// wadm's store unreadable for a while (a JetStream leader election, a NATS failover): wadm answers
// `Internal storage error` to every read, the same reply it gives for a key that holds another
// lattice's list of applications. No decision that writes, refuses for good or lets go may rest on
// that reply: each one below waits (LatticeUnavailable, retried) until wadm shows what is there.
// In memory (support/memory-lattice.ts); test/lattice/store-unreadable.test.ts does the same
// against the real wadm with its store made unreadable.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { callOf } from '../../src/core/application.js';
import { decideFinalize, decideSync } from '../../src/core/decide.js';
import { fromPolicy } from '../../src/core/tenancy.js';
import type { HookResponse } from '../../src/schema/hook.js';
import { MemoryLattices } from '../support/memory-lattice.js';
import { wasmApp, hookRequest, type Resource } from '../support/resources.js';

const NOW = Date.parse('2026-11-30T12:00:00Z');
const ANY = fromPolicy({ rules: [{ namespaces: ['*'], lattices: ['*'] }] }, 'default');
const app = (lattice = 'default'): Resource => wasmApp().inLattice(lattice).build();

const sync = (lattices: MemoryLattices, parent: Resource, status?: unknown) =>
  lattices.run(decideSync, callOf(hookRequest(parent, { status }), ANY, { now: NOW }));
const finalize = (lattices: MemoryLattices, parent: Resource, status?: unknown) =>
  lattices.run(decideFinalize, callOf(hookRequest(parent, { status, finalizing: true }), ANY, { now: NOW }));

const ready = (response: HookResponse) => response.status.conditions!.find((c) => c.type === 'Ready')!;
const sent = (lattices: MemoryLattices) => lattices.performed.map(({ lattice, action }) => `${lattice}:${action.kind}`);

/** Deployed in `lattice`; the status Metacontroller sends back next. */
async function deployedIn(lattices: MemoryLattices, lattice = 'default'): Promise<HookResponse['status']> {
  const run = await sync(lattices, app(lattice));
  assert.equal(run.response.status.deployedVersion, run.response.status.version);
  lattices.performed.length = 0;
  return run.response.status;
}

/** Another lattice wadm answers normally for, meanwhile: it proves nothing about our key. */
async function anotherLatticeAnswers(lattices: MemoryLattices): Promise<void> {
  const other = await sync(lattices, wasmApp().inLattice('other').named('busy').build());
  assert.equal(other.response.status.deployedVersion, other.response.status.version);
}

describe('the first put while the store is unreadable', () => {
  it('puts nothing and says LatticeUnavailable, not NameCollision, while another lattice answers; puts once readable', async () => {
    const lattices = new MemoryLattices();
    await anotherLatticeAnswers(lattices);
    lattices.of('default').storeUnreadable = true;
    lattices.performed.length = 0;
    const run = await sync(lattices, app());
    assert.deepEqual(sent(lattices), ['default:read-model', 'default:read-list']);
    assert.deepEqual(run.facts.writes, []);
    assert.equal(ready(run.response).reason, 'LatticeUnavailable');
    assert.equal(ready(run.response).status, 'Unknown');
    assert.match(run.response.status.message!, /could not be checked \(StorageError: Internal storage error\)/);
    assert.ok(run.response.resyncAfterSeconds! > 0, 'retried');

    lattices.of('default').storeUnreadable = false;
    const later = await sync(lattices, app(), run.response.status);
    assert.deepEqual(
      later.facts.writes.map((w) => w.kind),
      ['put', 'deploy'],
    );
  });
});

describe('a NameCollision at sync', () => {
  it('is concluded when the lattice named like our key lists applications: its list is what the key holds', async () => {
    const lattices = new MemoryLattices();
    lattices.of('default-hello-world').seed('site', [['v1', { owner: null, contentHash: null }]]);
    lattices.of('default').keysHoldingIndex.add('hello-world');
    const run = await sync(lattices, app());
    assert.equal(ready(run.response).reason, 'NameCollision');
    assert.match(run.response.status.message!, /which is the list of applications of lattice "default-hello-world"/);
    assert.deepEqual(run.facts.writes, []);
  });

  it('is not concluded from a storage error while another lattice answers: LatticeUnavailable', async () => {
    const lattices = new MemoryLattices();
    const before = await deployedIn(lattices);
    await anotherLatticeAnswers(lattices);
    lattices.of('default').storeUnreadable = true;
    const run = await sync(lattices, app(), before);
    assert.equal(ready(run.response).reason, 'LatticeUnavailable');
    assert.equal(run.response.status.deployedVersion, before.deployedVersion, 'what wadm last said is kept');
  });

  it('is not concluded from a key that holds an emptied list either: nothing shows it, so it waits and says what to rename', async () => {
    const lattices = new MemoryLattices();
    lattices.of('default').keysHoldingIndex.add('hello-world');
    const run = await sync(lattices, app());
    assert.equal(ready(run.response).reason, 'LatticeUnavailable');
    assert.match(run.response.status.message!, /lists no applications, .*rename this resource, or use a spec\.lattice without "-"/);
  });
});

describe('finalize while the store is unreadable', () => {
  it('deletes nothing, lets go of nothing, and finalizes once wadm can read the model again', async () => {
    const lattices = new MemoryLattices();
    const before = await deployedIn(lattices);
    await anotherLatticeAnswers(lattices);
    lattices.of('default').storeUnreadable = true;
    const waiting = await finalize(lattices, app(), before);
    assert.equal(waiting.response.finalized, false);
    assert.equal(ready(waiting.response).reason, 'LatticeUnavailable');
    assert.doesNotMatch(waiting.response.status.message!, /Nothing to delete/);
    assert.ok(lattices.of('default').model('hello-world')!.deployed, 'still deployed in wadm, and still owned');

    lattices.of('default').storeUnreadable = false;
    const done = await finalize(lattices, app(), waiting.response.status);
    assert.equal(done.response.finalized, true);
    assert.equal(ready(done.response).reason, 'Deleted');
    assert.equal(lattices.of('default').model('hello-world'), undefined);
  });

  it('lets go without a delete when the lattice named like the key lists applications (nothing of ours can be there)', async () => {
    const lattices = new MemoryLattices();
    lattices.of('default-hello-world').seed('site', [['v1', { owner: null, contentHash: null }]]);
    lattices.of('default').keysHoldingIndex.add('hello-world');
    const run = await finalize(lattices, app());
    assert.equal(run.response.finalized, true);
    assert.match(
      run.response.status.message!,
      /^Nothing to delete: the wadm key of application "hello-world" in lattice "default" is lattice "default-hello-world"'s list/,
    );
    assert.deepEqual(sent(lattices), ['default:read-model', 'default:read-list']);
  });

  it('keeps the finalizer when that lattice lists nothing, or its list cannot be read', async () => {
    const lattices = new MemoryLattices();
    lattices.of('default').keysHoldingIndex.add('hello-world');
    assert.equal((await finalize(lattices, app())).response.finalized, false);
    lattices.of('default').storeUnreadable = true;
    assert.equal((await finalize(lattices, app())).response.finalized, false);
  });
});

describe('a move while the former lattice cannot be read', () => {
  it('keeps the former lattice in status.formerLattices, and cleans it once readable', async () => {
    const lattices = new MemoryLattices();
    const inA = await deployedIn(lattices, 'a');
    lattices.of('a').storeUnreadable = true;
    const first = await sync(lattices, app('b'), inA);
    lattices.of('b').setStatus('hello-world', { status: { type: 'deployed' } });
    const moved = await sync(lattices, app('b'), first.response.status);
    assert.deepEqual(moved.response.status.formerLattices, ['a']);
    assert.match(moved.response.status.message!, /not yet cleaned up in former lattice "a" \(StorageError\)/);
    assert.ok(lattices.of('a').model('hello-world')!.deployed, 'still running in a: the move is not done');

    lattices.of('a').storeUnreadable = false;
    const done = await sync(lattices, app('b'), moved.response.status);
    assert.equal(done.response.status.formerLattices, undefined);
    assert.equal(lattices.of('a').model('hello-world'), undefined);
  });

  it('keeps the finalizer while a former lattice cannot be read', async () => {
    const lattices = new MemoryLattices();
    const inA = await deployedIn(lattices, 'a');
    lattices.of('a').storeUnreadable = true;
    const moved = await sync(lattices, app('b'), inA);
    const run = await finalize(lattices, app('b'), moved.response.status);
    assert.equal(run.response.finalized, false);
    assert.deepEqual(run.response.status.formerLattices, ['a']);
    assert.ok(lattices.of('a').model('hello-world'));
  });
});
