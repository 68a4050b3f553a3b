// src/lattice/ against a real nats-server and the real wadm behind the fault-injecting relay: the
// wire details of each operation, the error mapping, retries, and the status subscription.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type NatsConnection } from 'nats';
import pino from 'pino';
import { WadmUnavailableError } from '../../src/lattice/errors.js';
import { LatticeWatch } from '../../src/lattice/watch.js';
import { Knowledge } from '../../src/lattice/knowledge.js';
import type { ModelFacts } from '../../src/core/facts.js';
import { WadmClient } from '../../src/lattice/wadm-client.js';
import { renderManifest } from '../../src/core/manifest.js';
import { validateParent } from '../../src/core/validate.js';
import type { Parent } from '../../src/schema/hook.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { wasmApp } from '../support/resources.js';
import { until } from '../support/wait.js';
import { testClock } from '../support/clock.js';
import { startRelayedWadm, type WadmRelay } from '../support/wadm-relay.js';

let nats: NatsServer;
let wadm: WadmRelay;
let nc: NatsConnection;
let client: WadmClient;
const requests: string[] = [];

before(async () => {
  nats = await startNatsServer();
  wadm = await startRelayedWadm(nats.url);
  nc = await connect({ servers: nats.url });
  client = new WadmClient({
    connection: () => nc,
    apiPrefix: 'wadm.api',
    timeoutMs: 300,
    onRequest: (_lattice, op, outcome) => requests.push(`${op}:${outcome}`),
  });
});
after(async () => {
  await nc.close();
  await wadm.stop();
  await nats.dispose();
});
beforeEach(async () => {
  await wadm.clear('default');
  wadm.reset();
  requests.length = 0;
});

function manifest(overrides: Record<string, unknown> = {}) {
  const result = validateParent(wasmApp().with(overrides).build() as unknown as Parent, 'default');
  assert.ok(result.ok);
  return renderManifest(result.app);
}

/** A status on wadm's subject, as wadm publishes it. */
async function publishStatus(name: string, type: string) {
  nc.publish(`wadm.status.default.${name}`, JSON.stringify({ status: { type }, version: '', components: [] }));
  await nc.flush();
}

async function rejects(promise: Promise<unknown>, reason: string) {
  await assert.rejects(promise, (err) => err instanceof WadmUnavailableError && err.reason === reason);
}

describe('the wadm client', () => {
  it('puts a manifest once and recognises "already exists" on the second put', async () => {
    const { body, version } = manifest();
    assert.deepEqual(await client.put('default', body), { kind: 'created', versions: 1 });
    assert.deepEqual(await client.put('default', body), { kind: 'exists' });
    assert.deepEqual(await client.versions('default', 'hello-world'), [{ version, deployed: false }]);
    assert.equal(wadm.requests[0]!.contentType, 'application/json');
  });

  it('reads our ownership annotations back', async () => {
    const { body, version, contentHash } = manifest();
    await client.put('default', body);
    const annotations = await client.annotations('default', 'hello-world');
    assert.equal(annotations?.['core.wasmcloud.com/owner'], 'default/hello-world');
    assert.equal(annotations?.['core.wasmcloud.com/content-hash'], contentHash);
    assert.equal((await client.annotations('default', 'hello-world', version))?.['version'], version);
    assert.equal(await client.annotations('default', 'hello-world', 'nope'), null);
  });

  it('answers null for an application wadm does not know', async () => {
    assert.equal(await client.versions('default', 'unknown'), null);
    assert.equal(await client.annotations('default', 'unknown'), null);
  });

  it('reads the double-nested status, and ok+undeployed for an unknown application', async () => {
    assert.deepEqual((await client.status('default', 'unknown')).status, { type: 'undeployed' });
  });

  it('deploys, undeploys and deletes', async () => {
    const { body, version } = manifest();
    await client.put('default', body);
    assert.deepEqual(await client.deploy('default', 'hello-world', version), { kind: 'done' });
    assert.equal((await wadm.model('default', 'hello-world'))!.deployed, version);
    assert.deepEqual(await client.undeploy('default', 'hello-world'), { kind: 'done' });
    assert.deepEqual(await client.deploy('default', 'unknown', version), { kind: 'notfound' });
    assert.deepEqual(await client.delete('default', 'hello-world', null), { kind: 'done' });
    assert.deepEqual(await client.delete('default', 'hello-world', null), { kind: 'done' }, 'noop is done too');
  });

  it('retries Internal storage error and succeeds when it passes', async () => {
    wadm.inject('versions', { kind: 'storage-error' }, { times: 2 });
    assert.equal(await client.versions('default', 'unknown'), null);
    assert.equal(wadm.count('versions'), 3);
  });

  it('gives up on a storage error that persists, as StorageError', async () => {
    wadm.inject('versions', { kind: 'storage-error' }, { times: 10 });
    await rejects(client.versions('default', 'unknown'), 'StorageError');
    assert.equal(wadm.count('versions'), 4);
  });

  it('tells a timeout from no responders from no connection', async () => {
    const held = wadm.hold('versions');
    await rejects(client.versions('default', 'slow'), 'Timeout');
    held.release();
    await wadm.pause();
    try {
      await rejects(client.versions('default', 'x'), 'NoResponders');
    } finally {
      await wadm.resume();
    }
    const offline = new WadmClient({ connection: () => undefined, apiPrefix: 'wadm.api', timeoutMs: 300 });
    await rejects(offline.versions('default', 'x'), 'Disconnected');
    assert.deepEqual(requests, ['versions:timeout', 'versions:no_responders']);
  });

  it("maps a deploy of a version wadm does not hold to notfound, any other refusal to rejected with wadm's message", async () => {
    const { body } = manifest();
    await client.put('default', body);
    // What a caller meets when another wadm instance's put replaced the model it put into.
    assert.deepEqual(await client.deploy('default', 'hello-world', 'nope'), { kind: 'notfound' });
    const refusal = "Component identifier 'x' is already deployed in a different application 'y'.";
    wadm.inject('deploy', { kind: 'error', message: refusal });
    assert.deepEqual(await client.deploy('default', 'hello-world', 'nope'), { kind: 'rejected', message: refusal });
  });

  it('refuses to build a subject from a name with a wildcard or a dot', async () => {
    await assert.rejects(client.versions('default', 'a.b'), /refusing to build a NATS subject/);
    await assert.rejects(client.versions('*', 'a'), /refusing to build a NATS subject/);
    assert.equal(wadm.count(), 0);
  });
});

describe('what a replica remembers of wadm (Knowledge)', () => {
  const clock = testClock(0);
  function knowledge(deployGraceMs = 60_000, capacity = 2) {
    clock.set(0);
    const known = new Knowledge({ capacity, modelTtlMs: 300_000, deployGraceMs, livenessMs: 5_000, now: clock.now });
    const watch = new LatticeWatch(() => nc, known, pino({ level: 'silent' }), {
      now: clock.now,
      idleMs: 15 * 60_000,
      retryFailedMs: 60_000,
    });
    return Object.assign(known, { watch: (lattice: string) => watch.watch(lattice) });
  }
  const ours: ModelFacts = {
    versions: ['v1'],
    deployedVersion: 'v1',
    known: { v1: { version: 'v1', owner: 'default/a', contentHash: null } },
  };

  it('keeps the latest status from the subscription and skips malformed messages', async () => {
    const known = knowledge();
    known.manage('default', 'a');
    known.watch('default');
    await nc.flush();
    nc.publish('wadm.status.default.a', 'not json');
    nc.publish('wadm.status.default.a', JSON.stringify({ status: { type: 'bogus' } }));
    await publishStatus('a', 'deployed');
    await until(() => known.status('default', 'a') !== undefined);
    assert.deepEqual(
      known.status('default', 'a'),
      { status: { status: { type: 'deployed' } }, predatesDeploy: false, heardAt: 0 },
      'kept lean: what a verdict reads, and when it was heard',
    );
  });

  it('flags a status that may predate our deploy, until a newer one arrives', async () => {
    const known = knowledge();
    known.watch('default');
    await nc.flush();
    known.rememberStatus('default', 'b', { status: { type: 'deployed' } }, false);
    known.deployed('default', 'b');
    assert.equal(known.status('default', 'b')!.predatesDeploy, true);
    assert.equal(
      known.rememberStatus('default', 'b', { status: { type: 'deployed' } }, false).predatesDeploy,
      true,
      'a model.status reply cannot prove it is newer',
    );
    await publishStatus('b', 'reconciling');
    await until(() => known.status('default', 'b')?.status.status.type === 'reconciling');
    assert.equal(known.status('default', 'b')!.predatesDeploy, false);
    assert.equal(known.status('default', 'b')!.followsOwnDeploy, true, 'heard after our deploy: evidence without a clock');
  });

  it('notes the version of a deploy wadm announces, so that a status heard after it speaks of that version', async () => {
    const known = knowledge();
    known.manage('default', 'd');
    known.watch('default');
    await nc.flush();
    const manifest = { apiVersion: 'core.oam.dev/v1beta1', kind: 'Application', metadata: { name: 'd', annotations: { version: 'v7' } } };
    nc.publish('wadm.evt.default.manifest_published', JSON.stringify({ type: 'com.wadm.manifest_published', data: manifest }));
    await publishStatus('d', 'reconciling');
    await until(() => known.status('default', 'd')?.status.status.type === 'reconciling');
    assert.equal(known.status('default', 'd')!.followsDeployOf, 'v7');
    nc.publish('wadm.evt.default.manifest_unpublished', JSON.stringify({ type: 'com.wadm.manifest_unpublished', data: { name: 'd' } }));
    await publishStatus('d', 'undeployed');
    await until(() => known.status('default', 'd')?.status.status.type === 'undeployed');
    assert.equal(known.status('default', 'd')!.followsDeployOf, undefined, 'an undeploy announces no version');
  });

  it('trusts the latest status once the deploy grace period has passed (wadm publishes only changes)', () => {
    const known = knowledge(1_000);
    known.rememberStatus('default', 'c', { status: { type: 'deployed' } }, false);
    known.deployed('default', 'c');
    clock.advance(1_001);
    assert.equal(known.status('default', 'c')!.predatesDeploy, false);
  });

  it('is bounded, forgetting the least recently used entry', () => {
    const known = knowledge();
    for (const name of ['x', 'y', 'z']) known.rememberStatus('default', name, { status: { type: 'deployed' } }, false);
    assert.equal(known.size, 2);
    assert.equal(known.status('default', 'x'), undefined);
    assert.equal(known.evictions, 1);
  });

  it('hands out a remembered model marked as such, and no stamp once the lattice has been silent past the liveness window', () => {
    const known = knowledge();
    known.answered('default');
    known.remember('default', 'a', ours, known.checkpoint());
    assert.deepEqual(known.model('default', 'a'), { ...ours, remembered: true });
    const stamp = known.stamp('default', 'a');
    assert.ok(stamp);
    clock.advance(4_999);
    assert.equal(known.stamp('default', 'a'), stamp, 'nothing changed, wadm answered recently');
    clock.advance(1);
    assert.equal(known.stamp('default', 'a'), undefined, 'wadm has not answered for the liveness window');
    known.answered('default');
    assert.equal(known.stamp('default', 'a'), stamp);
  });

  it('does not keep a model read before an event that made it stale, and forgets everything on reset', () => {
    const known = knowledge();
    known.answered('default');
    const before = known.checkpoint();
    known.forgetModel('default', 'a'); // a deploy announced while our call was reading
    known.remember('default', 'a', ours, before);
    assert.equal(known.model('default', 'a'), undefined);
    known.remember('default', 'a', ours, known.checkpoint());
    assert.ok(known.model('default', 'a'));
    known.reset();
    assert.equal(known.model('default', 'a'), undefined);
    assert.equal(known.isAlive('default'), false);
  });

  it('asks wadm again after the model TTL, counted on the injected clock', () => {
    const known = knowledge();
    known.remember('default', 'a', ours, known.checkpoint());
    clock.advance(299_999);
    assert.ok(known.model('default', 'a'));
    clock.advance(1);
    assert.equal(known.model('default', 'a'), undefined);
  });
});

describe('the lattice watch: what the service subscribes to, and for how long', () => {
  const clock = testClock(0);
  const silent = pino({ level: 'silent' });
  const ours: ModelFacts = {
    versions: ['v1'],
    deployedVersion: 'v1',
    known: { v1: { version: 'v1', owner: 'default/a', contentHash: null } },
  };

  it("keeps no status of an application no hook call asked about: others' statuses cannot push ours out", () => {
    const known = new Knowledge({ capacity: 2, modelTtlMs: 300_000, deployGraceMs: 10_000, livenessMs: 5_000, now: clock.now });
    known.manage('default', 'ours');
    for (const name of ['x', 'y', 'z', 'w']) known.rememberStatus('default', name, { status: { type: 'deployed' } }, true);
    known.rememberStatus('default', 'ours', { status: { type: 'reconciling' } }, true);
    assert.equal(known.size, 1);
    assert.equal(known.evictions, 0);
    assert.equal(known.status('default', 'ours')?.status.status.type, 'reconciling');
  });

  it('unsubscribes a lattice no call used for the idle time, and drops what it knew of it', async () => {
    clock.set(0);
    const known = new Knowledge({ capacity: 10, modelTtlMs: 300_000, deployGraceMs: 10_000, livenessMs: 5_000, now: clock.now });
    const watch = new LatticeWatch(() => nc, known, silent, { now: clock.now, idleMs: 15 * 60_000, retryFailedMs: 60_000 });
    watch.watch('idle');
    known.answered('idle');
    known.remember('idle', 'a', ours, known.checkpoint());
    assert.ok(known.stamp('idle', 'a'));
    clock.advance(15 * 60_000);
    watch.watch('busy');
    assert.equal(watch.size, 1, 'only the lattice used lately');
    assert.equal(known.model('idle', 'a'), undefined, 'its events would go unseen: nothing of it is remembered');
    known.remember('idle', 'a', ours, known.checkpoint());
    assert.equal(known.model('idle', 'a'), undefined, 'nor kept until it is watched again');
    watch.watch('idle');
    assert.equal(watch.size, 2);
    known.remember('idle', 'a', ours, known.checkpoint());
    assert.ok(known.model('idle', 'a'));
  });

  it('survives a subscription that ends with an error: counted, its lattice served without memory, tried again later', async () => {
    clock.set(0);
    const known = new Knowledge({ capacity: 10, modelTtlMs: 300_000, deployGraceMs: 10_000, livenessMs: 5_000, now: clock.now });
    const failures: [string, boolean][] = [];
    let subscribed = 0;
    const refusing = {
      subscribe(subject: string) {
        subscribed++;
        let closed = false;
        return {
          getSubject: () => subject,
          isClosed: () => closed,
          unsubscribe: () => void (closed = true),
          // What nats.js does when the server answers a SUB with a permissions violation.
          [Symbol.asyncIterator]: async function* () {
            await Promise.resolve();
            throw Object.assign(new Error(`Permissions Violation for Subscription to "${subject}"`), { code: 'PERMISSIONS_VIOLATION' });
          },
        };
      },
    } as unknown as NatsConnection;
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const watch = new LatticeWatch(() => refusing, known, silent, {
        now: clock.now,
        idleMs: 15 * 60_000,
        retryFailedMs: 60_000,
        onFailure: (l, denied) => failures.push([l, denied]),
      });
      watch.watch('forbidden');
      await until(() => failures.length === 2);
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(
        failures,
        [
          ['forbidden', true],
          ['forbidden', true],
        ],
        'each refused subject counted: status and events',
      );
      assert.deepEqual(unhandled, []);
      assert.equal(watch.size, 0);
      known.remember('forbidden', 'a', ours, known.checkpoint());
      assert.equal(known.model('forbidden', 'a'), undefined, 'served without memory');
      watch.watch('forbidden');
      assert.equal(subscribed, 2, 'not again within the retry pause');
      clock.advance(60_000);
      watch.watch('forbidden');
      assert.equal(subscribed, 4);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
