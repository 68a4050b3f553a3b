import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHooks, type Lattice } from '../src/http/hooks.js';
import { createLogger } from '../src/service/logger.js';
import { Metrics } from '../src/service/metrics.js';
import { buildServer } from '../src/http/server.js';
import { defaultOnly } from '../src/core/tenancy.js';
import { MemoryLattice } from './support/memory-lattice.js';
import { fixtureResource, hello, hookRequest } from './support/resources.js';
import { TEST_EPOCH } from './support/clock.js';
import { jsonLogSink } from './support/logs.js';

function build(t: TestContext, options: { lattice?: Lattice; ready?: boolean; bodyLimit?: number; maxConcurrentHooks?: number } = {}) {
  const { sink, lines } = jsonLogSink();
  const lattice = options.lattice ?? new MemoryLattice();
  const metrics = new Metrics();
  const hooks = createHooks({ lattice, tenancy: defaultOnly('default'), budgetMs: 5000, now: () => TEST_EPOCH, cacheEntries: 1000 });
  const app = buildServer({
    hooks,
    logger: createLogger('debug', sink),
    metrics,
    isReady: () => options.ready ?? true,
    bodyLimit: options.bodyLimit ?? 16 * 1024 * 1024,
    maxConcurrentHooks: options.maxConcurrentHooks ?? 64,
  });
  t.after(() => app.close());
  return { app, lattice, lines };
}

describe('POST /sync', () => {
  it('answers 200 with children: [] and a status for a valid resource', async (t) => {
    const { app } = build(t);
    const res = await app.inject({ method: 'POST', url: '/sync', payload: hookRequest(fixtureResource('hello.yaml')) });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['status', 'children', 'resyncAfterSeconds']);
    assert.deepEqual(body.children, []);
    assert.equal(body.status.phase, 'Reconciling');
  });

  it('answers a spec error with 200, Stalled=True and a message naming the field, and sends nothing to wadm', async (t) => {
    const lattice = new MemoryLattice();
    const { app } = build(t, { lattice });
    const bad = hello({ components: [{ name: 'c', type: 'component', properties: { image: 'i', config: [{ name: 'x', properties: { port: 8080 } }] } }] });
    const res = await app.inject({ method: 'POST', url: '/sync', payload: hookRequest(bad) });
    assert.equal(res.statusCode, 200);
    const stalled = res.json().status.conditions.find((c: { type: string }) => c.type === 'Stalled');
    assert.equal(stalled.reason, 'InvalidSpec');
    assert.match(stalled.message, /spec\.components\[0\]\.properties\.config\[0\]\.properties\.port: must be a string/);
    assert.deepEqual(lattice.lattices, []);
  });

  it('answers malformed JSON with 400 and a JSON error', async (t) => {
    const { app } = build(t);
    const res = await app.inject({ method: 'POST', url: '/sync', headers: { 'content-type': 'application/json' }, payload: '{"parent":' });
    assert.equal(res.statusCode, 400);
    assert.equal(typeof res.json().message, 'string');
  });

  it('answers a body that is not a hook request with 400 naming what is missing', async (t) => {
    const { app } = build(t);
    for (const payload of [{}, { parent: { metadata: { name: 'x' } } }, [], 'null']) {
      const res = await app.inject({ method: 'POST', url: '/sync', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
      assert.equal(res.json().error, 'BadRequest');
    }
    const res = await app.inject({ method: 'POST', url: '/sync', payload: {} });
    assert.match(res.json().message, /body\.parent: is required/);
  });

  it('accepts a 16 MiB request (whole objects with managedFields)', async (t) => {
    const { app } = build(t);
    const request = hookRequest(fixtureResource('hello.yaml'));
    const big = 'x'.repeat(1024 * 1024);
    (request.parent.metadata as Record<string, unknown>)['managedFields'] = Array.from({ length: 15 }, (_, i) => ({ manager: `m${i}`, fieldsV1: big }));
    const res = await app.inject({ method: 'POST', url: '/sync', payload: JSON.stringify(request), headers: { 'content-type': 'application/json' } });
    assert.equal(res.statusCode, 200);
  });

  it('accepts hook v2 requests (namespace/name child keys) the same way', async (t) => {
    const { app } = build(t);
    const request = { ...hookRequest(fixtureResource('hello.yaml')), children: { 'ConfigMap.v1': { 'default/x': {} } } };
    const res = await app.inject({ method: 'POST', url: '/sync', payload: request });
    assert.equal(res.statusCode, 200);
  });

  it('passes unknown annotations, and config keys such as __proto__, through to wadm untouched', async (t) => {
    const lattice = new MemoryLattice();
    const { app } = build(t, { lattice });
    const raw = `{"parent":{"metadata":{"name":"app","namespace":"ns","annotations":{"example.com/team":"blue","kubectl.kubernetes.io/last-applied-configuration":"{}"}},"spec":{"components":[{"name":"c","type":"component","properties":{"image":"i","config":[{"name":"cfg","properties":{"__proto__":"p","constructor":"c"}}]}}]}}}`;
    const res = await app.inject({ method: 'POST', url: '/sync', headers: { 'content-type': 'application/json' }, payload: raw });
    assert.equal(res.statusCode, 200);
    const body = [...lattice.bodies.values()][0]!;
    assert.match(body, /"example\.com\/team":"blue"/);
    assert.doesNotMatch(body, /last-applied-configuration/);
    assert.match(body, /"__proto__":"p","constructor":"c"/);
    assert.equal(({} as Record<string, unknown>)['p'], undefined);
  });

  it('answers a bug with 500 and a generic body, and logs the stack', async (t) => {
    const lattice: Lattice = { perform: () => Promise.reject(new Error('secret detail')) };
    const { app, lines } = build(t, { lattice });
    const res = await app.inject({ method: 'POST', url: '/sync', payload: hookRequest(fixtureResource('hello.yaml')) });
    assert.equal(res.statusCode, 500);
    assert.doesNotMatch(res.body, /secret detail/);
    assert.ok(lines.some((l) => l['msg'] === 'unhandled error' && JSON.stringify(l['err']).includes('secret detail')));
  });
});

describe('ETags (Metacontroller webhook.etag)', () => {
  it('tags every answer and answers an unchanged one with a bodyless 304', async (t) => {
    const { app } = build(t);
    const payload = hookRequest(fixtureResource('hello.yaml'));
    const first = await app.inject({ method: 'POST', url: '/sync', payload });
    const etag = String(first.headers['etag']);
    assert.match(etag, /^"[\w-]+"$/);
    const again = await app.inject({ method: 'POST', url: '/sync', payload, headers: { 'if-none-match': etag } });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    const other = await app.inject({ method: 'POST', url: '/sync', payload, headers: { 'if-none-match': '"something-else"' } });
    assert.equal(other.statusCode, 200);
    assert.equal(other.headers['etag'], etag);
  });
});

describe('a burst above capacity', () => {
  it('is answered 429 with Retry-After (which Metacontroller honours) rather than left to time out', async (t) => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const memory = new MemoryLattice();
    const slow: Lattice = { perform: async (l, n, a) => (await gate, memory.perform(l, n, a)) };
    const { app } = build(t, { lattice: slow, maxConcurrentHooks: 2 });
    const send = () => app.inject({ method: 'POST', url: '/sync', payload: hookRequest(fixtureResource('hello.yaml')) });
    const first = [send(), send()];
    await new Promise((resolve) => setTimeout(resolve, 20));
    const refused = await send();
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.headers['retry-after'], '1');
    release();
    assert.deepEqual((await Promise.all(first)).map((r) => r.statusCode), [200, 200]);
    assert.equal((await send()).statusCode, 200, 'capacity comes back once calls finish');
  });
});

describe('POST /finalize', () => {
  it('deletes an owned model and answers finalized: true', async (t) => {
    const lattice = new MemoryLattice();
    const { app } = build(t, { lattice });
    await app.inject({ method: 'POST', url: '/sync', payload: hookRequest(fixtureResource('hello.yaml')) });
    assert.ok(lattice.model('hello-world'));
    const res = await app.inject({ method: 'POST', url: '/finalize', payload: hookRequest(fixtureResource('hello.yaml'), { finalizing: true }) });
    assert.equal(res.json().finalized, true);
    assert.equal(lattice.model('hello-world'), undefined);
  });
});

describe('probes and metrics', () => {
  it('answers /healthz always and /readyz only while ready', async (t) => {
    const { app } = build(t, { ready: false });
    assert.equal((await app.inject('/healthz')).statusCode, 200);
    const ready = await app.inject('/readyz');
    assert.equal(ready.statusCode, 503);
    assert.match(ready.json().reason, /NATS/);
  });

  it('serves Prometheus text with hook counters', async (t) => {
    const { app } = build(t);
    await app.inject({ method: 'POST', url: '/sync', payload: hookRequest(fixtureResource('hello.yaml')) });
    const res = await app.inject('/metrics');
    assert.match(String(res.headers['content-type']), /text\/plain/);
    assert.match(res.body, /wasmcloud_metacontroller_hook_requests_total\{hook="sync",code="200"\} 1/);
  });
});
