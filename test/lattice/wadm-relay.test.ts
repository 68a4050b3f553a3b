// The fault-injecting relay in front of the real wadm: it must pass everything on unchanged, and
// each fault must be exactly what it says (who sees what, and whether wadm acted); and the real
// wadm's store, made unreadable, must fail as wadm's store fails.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, headers, type NatsConnection } from 'nats';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { until } from '../support/wait.js';
import { startRelayedWadm, type WadmRelay } from '../support/wadm-relay.js';

const LATTICE = 'relay';
const manifest = (name: string) =>
  JSON.stringify({
    apiVersion: 'core.oam.dev/v1beta1',
    kind: 'Application',
    metadata: { name, annotations: { version: 'v1' } },
    spec: { components: [] },
  });

let nats: NatsServer;
let relay: WadmRelay;
let nc: NatsConnection;

before(async () => {
  nats = await startNatsServer();
  relay = await startRelayedWadm(nats.url);
  nc = await connect({ servers: nats.url });
});
after(async () => {
  await nc.close();
  await relay.stop();
  await nats.dispose();
});
beforeEach(async () => {
  await relay.clear(LATTICE);
  relay.reset();
});

async function ask(operation: string, body = '', timeout = 3000): Promise<{ result: string; message: string }> {
  const h = headers();
  h.set('Content-Type', 'application/json');
  const reply = await nc.request(`wadm.api.${LATTICE}.model.${operation}`, body, { timeout, headers: h });
  return reply.json();
}

describe('the wadm relay', () => {
  it('passes requests to the real wadm, which answers the caller, and logs each one', async () => {
    assert.equal((await ask('put', manifest('a'))).result, 'created');
    assert.equal((await ask('put', manifest('a'))).message, 'Manifest version v1 already exists', "wadm's own answer");
    assert.deepEqual(await relay.model(LATTICE, 'a'), { versions: ['v1'], deployed: null });
    assert.deepEqual(
      relay.requests,
      [
        { op: 'put', lattice: LATTICE, contentType: 'application/json' },
        { op: 'put', lattice: LATTICE, contentType: 'application/json' },
      ],
      'model() goes past the relay, unlogged',
    );
    assert.equal(relay.count('put'), 2);
  });

  it("answers storage errors and refusals in wadm's error shape, for as many requests as asked, without wadm", async () => {
    relay.inject('put', { kind: 'storage-error' }, { times: 2 });
    relay.inject('deploy', { kind: 'error', message: 'no' });
    assert.deepEqual(await ask('put', manifest('b')), { result: 'error', message: 'Internal storage error' });
    assert.deepEqual(await ask('put', manifest('b')), { result: 'error', message: 'Internal storage error' });
    assert.equal(await relay.model(LATTICE, 'b'), undefined, 'wadm never saw them');
    assert.equal((await ask('put', manifest('b'))).result, 'created');
    assert.deepEqual(await ask('deploy.b'), { result: 'error', message: 'no' });
    assert.equal((await relay.model(LATTICE, 'b'))!.deployed, null);
  });

  it('loses a request before wadm, or the reply after wadm acted: the caller times out either way', async () => {
    relay.inject('put', { kind: 'lost-request' });
    await assert.rejects(ask('put', manifest('c'), 300), /TIMEOUT/);
    assert.equal(await relay.model(LATTICE, 'c'), undefined);
    relay.inject('put', { kind: 'lost-reply' });
    await assert.rejects(ask('put', manifest('c'), 300), /TIMEOUT/);
    await until(async () => (await relay.model(LATTICE, 'c'))?.versions.length === 1, { what: 'wadm stored the put whose reply was lost' });
  });

  it('holds a request until released: wadm sees it only then', async () => {
    const held = relay.hold('put');
    const answer = ask('put', manifest('d'));
    await held.arrived;
    assert.equal(await relay.model(LATTICE, 'd'), undefined);
    held.release();
    assert.equal((await answer).result, 'created');
  });

  it("holds only the given lattice's request when asked to", async () => {
    const held = relay.hold('put', { lattice: 'elsewhere' });
    assert.equal((await ask('put', manifest('e'))).result, 'created', 'another lattice passes');
    const answer = nc.request('wadm.api.elsewhere.model.put', manifest('e'), { timeout: 3000 });
    await held.arrived;
    held.release();
    assert.equal((await answer).json<{ result: string }>().result, 'created');
    await relay.clear('elsewhere');
  });

  it("makes the real wadm's store unreadable: every model read is a storage error, status still answers; then readable again", async () => {
    assert.equal((await ask('put', manifest('f'))).result, 'created');
    await relay.storeReadable(false);
    try {
      assert.deepEqual(await ask('versions.f'), { result: 'error', message: 'Internal storage error' });
      assert.deepEqual(await ask('get'), { result: 'error', message: 'Internal storage error' }, 'the list too');
      assert.equal((await ask('status.f')).result, 'ok', 'status reads no model');
    } finally {
      await relay.storeReadable(true);
    }
    assert.deepEqual(await relay.model(LATTICE, 'f'), { versions: ['v1'], deployed: null });
  });

  it('answers nothing while paused, so callers get no responders', async () => {
    await relay.pause();
    try {
      await assert.rejects(ask('get'), /503/);
    } finally {
      await relay.resume();
    }
    assert.equal((await ask('get')).result, 'success');
  });
});
