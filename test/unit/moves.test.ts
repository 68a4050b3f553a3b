// An application whose lattice changes: the core deploys in the new lattice first, then undeploys
// (Orphan) or deletes (Delete) what the resource owns in the old one, remembering the lattices still
// to clean in status.formerLattices, which Metacontroller sends back; finalize cleans every one.
// In memory (one MemoryLattice per lattice); test/lattice/lattices-e2e.test.ts does the same against wadm.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { callOf } from '../../src/core/application.js';
import { decideFinalize, decideSync } from '../../src/core/decide.js';
import type { HookResponse } from '../../src/schema/hook.js';
import { defaultOnly, fromPolicy, type Tenancy } from '../../src/core/tenancy.js';
import { MemoryLattices } from '../support/memory-lattice.js';
import { wasmApp, hookRequest, type Resource } from '../support/resources.js';

const NOW = Date.parse('2026-11-30T12:00:00Z');
const ANY = fromPolicy({ rules: [{ namespaces: ['*'], lattices: ['*'] }] }, 'default');

function app(lattice: string, overrides: Record<string, unknown> = {}): Resource {
  return wasmApp()
    .with({ lattice, ...overrides })
    .build();
}

async function sync(lattices: MemoryLattices, parent: Resource, status: unknown, tenancy: Tenancy = ANY) {
  return lattices.run(decideSync, callOf(hookRequest(parent, { status }), tenancy, { now: NOW }));
}

async function finalize(lattices: MemoryLattices, parent: Resource, status: unknown, tenancy: Tenancy = ANY) {
  return lattices.run(decideFinalize, callOf(hookRequest(parent, { status, finalizing: true }), tenancy, { now: NOW }));
}

/** Synced in lattice `a`: the status Metacontroller would send back next. */
async function deployedIn(
  lattices: MemoryLattices,
  lattice: string,
  overrides: Record<string, unknown> = {},
): Promise<HookResponse['status']> {
  const run = await sync(lattices, app(lattice, overrides), undefined);
  assert.equal(run.response.status.deployedVersion, run.response.status.version);
  return run.response.status;
}

/** wadm reports the application deployed in `lattice`, as it does once a host runs it. */
function reportsDeployed(lattices: MemoryLattices, lattice: string): void {
  lattices.of(lattice).setStatus('hello-world', { status: { type: 'deployed' } });
}

/** The move's first call, then wadm's report from the new lattice, then the call that retires the former one. */
async function move(lattices: MemoryLattices, to: Resource, from: HookResponse['status']) {
  const first = await sync(lattices, to, from);
  reportsDeployed(lattices, (to.spec as { lattice: string }).lattice);
  return { first, done: await sync(lattices, to, first.response.status) };
}

const where = (lattices: MemoryLattices) => lattices.performed.map(({ lattice, action }) => `${lattice}:${action.kind}`);

describe('moving an application to another lattice', () => {
  it('deploys in the new lattice first, then, once wadm reports it deployed there, deletes what it owns in the old one (Delete)', async () => {
    const lattices = new MemoryLattices();
    const before = await deployedIn(lattices, 'a');
    lattices.performed.length = 0;
    const first = await sync(lattices, app('b'), before);
    assert.deepEqual(where(lattices), ['b:read-model', 'b:put', 'b:deploy'], 'acknowledged is not deployed: a is left as it is');
    assert.ok(lattices.of('a').model('hello-world')!.deployed, 'still running where it was');
    assert.deepEqual(first.response.status.formerLattices, ['a']);
    assert.equal(first.response.status.conditions![0]!.reason, 'Moving');
    assert.match(
      first.response.status.message!,
      /the application is left as it is in former lattice "a" until wadm reports it deployed in lattice "b"$/,
    );
    assert.ok(first.response.resyncAfterSeconds !== undefined, 'comes back to finish the move');
    reportsDeployed(lattices, 'b');
    lattices.performed.length = 0;
    const run = await sync(lattices, app('b'), first.response.status);
    assert.deepEqual(where(lattices).slice(-2), ['a:read-model', 'a:delete']);
    assert.equal(run.response.status.conditions![0]!.reason, 'Deployed');
    assert.equal(lattices.of('a').model('hello-world'), undefined);
    assert.equal(lattices.of('b').model('hello-world')!.deployed, run.response.status.version);
    assert.equal(run.response.status.lattice, 'b');
    assert.equal(run.response.status.formerLattices, undefined, 'nothing left to clean');
    assert.match(run.response.status.message!, /; deleted the application in former lattice "a"$/);
  });

  it('is not drift: the deploy in the new lattice replaces nothing and says nothing of changes outside Kubernetes', async () => {
    const lattices = new MemoryLattices();
    const before = await deployedIn(lattices, 'a');
    lattices.performed.length = 0;
    const run = await sync(lattices, app('b'), before);
    const deploy = lattices.performed.find(({ lattice, action }) => lattice === 'b' && action.kind === 'deploy')!.action;
    assert.deepEqual(deploy, { kind: 'deploy', version: run.response.status.version, moving: 'a' });
    assert.doesNotMatch(run.response.status.message!, /outside Kubernetes/);
  });

  it('undeploys in the old lattice and keeps its versions (Orphan)', async () => {
    const lattices = new MemoryLattices();
    const before = await deployedIn(lattices, 'a', { deletionPolicy: 'Orphan' });
    const run = (await move(lattices, app('b', { deletionPolicy: 'Orphan' }), before)).done;
    const old = lattices.of('a').model('hello-world')!;
    assert.equal(old.deployed, null);
    assert.equal(old.versions.size, 1);
    assert.match(run.response.status.message!, /undeployed the application in former lattice "a"/);
    assert.equal(run.response.status.formerLattices, undefined);
  });

  it('leaves the old lattice alone while the new one cannot be asked, and remembers it in the status', async () => {
    const lattices = new MemoryLattices();
    const before = await deployedIn(lattices, 'a');
    lattices.of('b').down = true;
    const run = await sync(lattices, app('b'), before);
    assert.deepEqual(run.response.status.formerLattices, ['a']);
    assert.equal(run.response.status.lattice, 'b');
    assert.ok(lattices.of('a').model('hello-world')!.deployed, 'still running where it was');
    // wadm of b is back: the next calls (with the status just written) finish the move.
    lattices.of('b').down = false;
    const next = (await move(lattices, app('b'), run.response.status)).done;
    assert.equal(next.response.status.formerLattices, undefined);
    assert.equal(lattices.of('a').model('hello-world'), undefined);
  });

  it('keeps a former lattice it could not clean, with a retry, until it can', async () => {
    const lattices = new MemoryLattices();
    const before = await deployedIn(lattices, 'a');
    lattices.of('a').down = true;
    const run = (await move(lattices, app('b'), before)).done;
    assert.deepEqual(run.response.status.formerLattices, ['a']);
    assert.ok(run.response.resyncAfterSeconds !== undefined, 'comes back to clean it');
    assert.match(run.response.status.message!, /not yet cleaned up in former lattice "a" \(NoResponders\)/);
    lattices.of('a').down = false;
    const later = await sync(lattices, app('b'), run.response.status);
    assert.equal(later.response.status.formerLattices, undefined);
    assert.equal(lattices.of('a').model('hello-world'), undefined);
  });

  it("never touches a former lattice's model that is not the resource's, nor one the policy no longer allows", async () => {
    const lattices = new MemoryLattices();
    const before = await deployedIn(lattices, 'a');
    lattices.of('a').seed('hello-world', [['v9', { owner: 'other/app', contentHash: null }]], 'v9');
    lattices.performed.length = 0;
    const run = (await move(lattices, app('b'), before)).done;
    assert.deepEqual(lattices.of('a').model('hello-world')!.deployed, 'v9');
    assert.ok(!where(lattices).some((w) => w.startsWith('a:') && !w.endsWith('read-model') && !w.endsWith('read-version')));
    assert.equal(run.response.status.formerLattices, undefined);

    const denied = new MemoryLattices();
    const status = await deployedIn(denied, 'a');
    const onlyB = fromPolicy({ rules: [{ namespaces: ['*'], lattices: ['b'] }] }, 'default');
    const first = await sync(denied, app('b'), status, onlyB);
    reportsDeployed(denied, 'b');
    const moved = await sync(denied, app('b'), first.response.status, onlyB);
    assert.deepEqual(
      where(denied).filter((w) => w.startsWith('a:')),
      ['a:read-model', 'a:put', 'a:deploy'],
      'the first sync in a only, nothing at the move',
    );
    assert.ok(denied.of('a').model('hello-world')!.deployed);
    assert.equal(moved.response.status.formerLattices, undefined, 'nothing can be done there: nothing is sent, nothing kept');
  });

  it('keeps a former lattice NATS refuses the service (an ACL mistake must not leak the application there), until it may', async () => {
    const lattices = new MemoryLattices();
    const before = await deployedIn(lattices, 'a');
    const refused = 'NATS refused this service\'s user to publish to "wadm.api.a.model.versions.hello-world" (permissions violation)';
    const first = await sync(lattices, app('b'), before);
    reportsDeployed(lattices, 'b');
    lattices.of('a').scripted.push({ kind: 'read-model', result: { kind: 'unavailable', reason: 'NotPermitted', message: refused } });
    const run = await sync(lattices, app('b'), first.response.status);
    assert.deepEqual(run.response.status.formerLattices, ['a']);
    assert.ok(run.response.status.message!.includes(`not yet cleaned up in former lattice "a" (NotPermitted): ${refused}; will retry`));
    assert.ok(lattices.of('a').model('hello-world')!.deployed);
    // Deleted while still refused there: the finalizer stays, saying what to grant.
    lattices.of('a').scripted.push({ kind: 'read-model', result: { kind: 'unavailable', reason: 'NotPermitted', message: refused } });
    const blocked = await finalize(lattices, app('b'), run.response.status);
    assert.equal(blocked.response.finalized, false);
    assert.equal(blocked.response.status.conditions![0]!.reason, 'LatticeNotPermitted');
    assert.deepEqual(blocked.response.status.formerLattices, ['a']);
    assert.ok(lattices.of('a').model('hello-world')!.deployed);
    // Granted again: cleaned, and let go.
    const done = await finalize(lattices, app('b'), blocked.response.status);
    assert.equal(done.response.finalized, true);
    assert.equal(lattices.of('a').model('hello-world'), undefined);
  });

  it('forgets a former lattice once the application is back in it', async () => {
    const lattices = new MemoryLattices();
    const inA = await deployedIn(lattices, 'a');
    lattices.of('b').down = true;
    const inB = (await sync(lattices, app('b'), inA)).response.status;
    assert.deepEqual(inB.formerLattices, ['a']);
    lattices.of('b').down = false;
    reportsDeployed(lattices, 'a');
    const back = await sync(lattices, app('a'), inB);
    assert.equal(back.response.status.lattice, 'a');
    assert.equal(back.response.status.formerLattices, undefined, 'b held nothing of it');
    assert.ok(lattices.of('a').model('hello-world')!.deployed);
  });

  it('cleans the old lattice once suspended in the new one', async () => {
    const lattices = new MemoryLattices();
    const before = await deployedIn(lattices, 'a');
    const run = await sync(lattices, app('b', { suspend: true }), before);
    assert.equal(run.response.status.conditions![0]!.reason, 'Suspended');
    assert.equal(lattices.of('a').model('hello-world'), undefined);
  });

  it('answers the same to the same state: a second call changes nothing', async () => {
    const lattices = new MemoryLattices();
    const before = await deployedIn(lattices, 'a');
    const { done } = await move(lattices, app('b'), before);
    lattices.performed.length = 0;
    const again = await sync(lattices, app('b'), done.response.status);
    assert.ok(!where(lattices).some((w) => w.startsWith('a:')), 'nothing more sent to the former lattice');
    assert.equal(again.response.status.formerLattices, undefined);
  });
});

describe('a move to a lattice where nothing runs it', () => {
  it('keeps the former deployment running and says why, then retires it once hosts run it there', async () => {
    const lattices = new MemoryLattices();
    const before = await deployedIn(lattices, 'a');
    const first = await sync(lattices, app('b'), before);
    // wadm in b has no host to run it on: it says so, and reports nothing deployed.
    lattices.of('b').setStatus('hello-world', { status: { type: 'waiting', message: 'No hosts available' } });
    lattices.performed.length = 0;
    const waiting = await sync(lattices, app('b'), first.response.status);
    assert.ok(!where(lattices).some((w) => w.startsWith('a:')), 'nothing sent to the former lattice');
    assert.ok(lattices.of('a').model('hello-world')!.deployed, 'still running where it was');
    assert.equal(waiting.response.status.conditions![0]!.reason, 'WaitingForHosts');
    assert.deepEqual(waiting.response.status.formerLattices, ['a']);
    assert.match(
      waiting.response.status.message!,
      /^No hosts available; the application is left as it is in former lattice "a" until wadm reports it deployed in lattice "b"$/,
    );
    reportsDeployed(lattices, 'b');
    const done = await sync(lattices, app('b'), waiting.response.status);
    assert.equal(done.response.status.formerLattices, undefined);
    assert.equal(lattices.of('a').model('hello-world'), undefined);
  });
});

describe('a change of DEFAULT_LATTICE', () => {
  const unset = () => wasmApp().build();
  const oldReplica = fromPolicy({ rules: [{ namespaces: ['*'], lattices: ['*'] }] }, 'a');
  const newReplica = fromPolicy({ rules: [{ namespaces: ['*'], lattices: ['*'] }] }, 'b');

  it('moves nothing: old and new replicas answering in turn keep an application in the lattice it is in', async () => {
    const lattices = new MemoryLattices();
    let status = (await sync(lattices, unset(), undefined, oldReplica)).response.status;
    assert.equal(status.lattice, 'a');
    reportsDeployed(lattices, 'a');
    lattices.performed.length = 0;
    for (const replica of [newReplica, oldReplica, newReplica, oldReplica, newReplica, oldReplica]) {
      status = (await sync(lattices, unset(), status, replica)).response.status;
      assert.equal(status.lattice, 'a');
      assert.equal(status.formerLattices, undefined);
      assert.equal(status.conditions![0]!.reason, 'Deployed');
    }
    assert.deepEqual(
      where(lattices).filter((w) => !w.endsWith(':read-summary') && !w.endsWith(':read-model') && !w.endsWith(':read-status')),
      [],
      'no write anywhere',
    );
    assert.ok(!where(lattices).some((w) => w.startsWith('b:')), 'nothing sent to the new default');
  });

  it('sends a new application to the new default, and moves an existing one only when its spec.lattice says so', async () => {
    const lattices = new MemoryLattices();
    assert.equal((await sync(lattices, wasmApp().named('fresh').build(), undefined, newReplica)).response.status.lattice, 'b');
    const inA = (await sync(lattices, unset(), undefined, oldReplica)).response.status;
    reportsDeployed(lattices, 'a');
    const { done } = await move(lattices, app('b'), inA);
    assert.equal(done.response.status.lattice, 'b');
    assert.equal(lattices.of('a').model('hello-world'), undefined);
  });

  it('without a lattice policy, refuses the former default rather than move: nothing sent, and says how to move it', async () => {
    const lattices = new MemoryLattices();
    const inA = (await sync(lattices, unset(), undefined, defaultOnly('a'))).response.status;
    lattices.performed.length = 0;
    const run = await sync(lattices, unset(), inA, defaultOnly('b'));
    assert.deepEqual(lattices.performed, []);
    assert.equal(run.response.status.lattice, 'a');
    assert.equal(run.response.status.conditions![0]!.reason, 'LatticeNotAllowed');
    assert.match(run.response.status.message!, /set spec\.lattice to "b" to use it/);
    assert.ok(lattices.of('a').model('hello-world')!.deployed);
  });
});

describe('finalizing an application that moved', () => {
  it('deletes in the current lattice and every former one before letting go (Delete)', async () => {
    const lattices = new MemoryLattices();
    const inA = await deployedIn(lattices, 'a');
    lattices.of('a').down = true;
    const inB = (await sync(lattices, app('b'), inA)).response.status;
    assert.deepEqual(inB.formerLattices, ['a']);
    const waiting = await finalize(lattices, app('b'), inB);
    assert.equal(waiting.response.finalized, false, 'lattice a still holds it');
    assert.deepEqual(waiting.response.status.formerLattices, ['a']);
    assert.equal(lattices.of('b').model('hello-world'), undefined);
    lattices.of('a').down = false;
    const done = await finalize(lattices, app('b'), waiting.response.status);
    assert.equal(done.response.finalized, true);
    assert.equal(lattices.of('a').model('hello-world'), undefined);
  });

  it('leaves every lattice as it is (Orphan)', async () => {
    const lattices = new MemoryLattices();
    const inA = await deployedIn(lattices, 'a', { deletionPolicy: 'Orphan' });
    lattices.of('a').down = true;
    const inB = (await sync(lattices, app('b', { deletionPolicy: 'Orphan' }), inA)).response.status;
    lattices.performed.length = 0;
    const run = await finalize(lattices, app('b', { deletionPolicy: 'Orphan' }), inB);
    assert.equal(run.response.finalized, true);
    assert.deepEqual(lattices.performed, []);
  });
});
