import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { InjectOptions } from 'fastify';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Lattice } from '../../src/sync.js';
import type { Metrics } from '../../src/plumbing/metrics.js';
import { Agent, request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import { KEEP_ALIVE_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from '../../src/server.js';
import { declaredBytes } from '../../src/http/hook-gate.js';
import { build } from '../support/http.js';
import { MemoryLattice } from '../support/memory-lattice.js';
import { wasmApp, hookRequest } from '../support/resources.js';
import { sleep, until } from '../support/wait.js';

describe('POST /sync', () => {
  it('names the holder of a model that is not ours only at debug, never at info or in the answer', async (t) => {
    const lattice = new MemoryLattice();
    lattice.seed('hello-world', [['v1', { owner: 'tenant-a/hello-world', contentHash: null }]], 'v1');
    const { app, lines } = build(t, { lattice });
    const res = await app.inject({ method: 'POST', url: '/sync', payload: hookRequest(wasmApp().inNamespace('tenant-b').build()) });
    assert.doesNotMatch(res.body, /tenant-a/);
    const naming = lines.filter((l) => JSON.stringify(l).includes('tenant-a'));
    assert.deepEqual(
      naming.map((l) => [l['level'], l['msg']]),
      [[20, 'owners of the versions read']],
    );
  });

  it('answers 200 with children: [] and a status for a valid resource', async (t) => {
    const { app } = build(t);
    const res = await app.inject({ method: 'POST', url: '/sync', payload: hookRequest(wasmApp().build()) });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['status', 'children', 'resyncAfterSeconds']);
    assert.deepEqual(body.children, []);
    assert.equal(body.status.phase, 'Reconciling');
  });

  it('answers a spec error with 200, Stalled=True and a message naming the field, and sends nothing to wadm', async (t) => {
    const lattice = new MemoryLattice();
    const { app } = build(t, { lattice });
    const bad = wasmApp()
      .with({
        components: [{ name: 'c', type: 'component', properties: { image: 'i', config: [{ name: 'x', properties: { port: 8080 } }] } }],
      })
      .build();
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
      const res = await app.inject({
        method: 'POST',
        url: '/sync',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify(payload),
      });
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
      assert.equal(res.json().error, 'BadRequest');
    }
    const res = await app.inject({ method: 'POST', url: '/sync', payload: {} });
    assert.match(res.json().message, /body\.parent: is required/);
  });

  it('accepts a 16 MiB request (whole objects with managedFields)', async (t) => {
    const { app } = build(t);
    const request = hookRequest(wasmApp().build());
    const big = 'x'.repeat(1024 * 1024);
    (request.parent.metadata as Record<string, unknown>)['managedFields'] = Array.from({ length: 15 }, (_, i) => ({
      manager: `m${i}`,
      fieldsV1: big,
    }));
    const res = await app.inject({
      method: 'POST',
      url: '/sync',
      payload: JSON.stringify(request),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.statusCode, 200);
  });

  it('accepts hook v2 requests (namespace/name child keys) the same way', async (t) => {
    const { app } = build(t);
    const request = { ...hookRequest(wasmApp().build()), children: { 'ConfigMap.v1': { 'default/x': {} } } };
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
    const res = await app.inject({ method: 'POST', url: '/sync', payload: hookRequest(wasmApp().build()) });
    assert.equal(res.statusCode, 500);
    assert.doesNotMatch(res.body, /secret detail/);
    assert.ok(lines.some((l) => l['msg'] === 'unhandled error' && JSON.stringify(l['err']).includes('secret detail')));
  });
});

describe('ETags (Metacontroller webhook.etag)', () => {
  it('tags every answer and answers an unchanged one with a bodyless 304', async (t) => {
    const { app } = build(t);
    const payload = hookRequest(wasmApp().build());
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
    let waiting = 0;
    const slow: Lattice = { perform: async (l, n, a) => (waiting++, await gate, memory.perform(l, n, a)) };
    const { app } = build(t, { lattice: slow, maxConcurrentHooks: 2 });
    // Two objects: Metacontroller sends one call per object at a time, and so does the service.
    const send = (name = 'hello-world') =>
      app.inject({ method: 'POST', url: '/sync', payload: hookRequest(wasmApp().named(name).build()) });
    const first = [send('a'), send('b')];
    await until(() => waiting === 2, { what: 'both calls wait for wadm' });
    const refused = await send();
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.headers['retry-after'], '1');
    release();
    assert.deepEqual(
      (await Promise.all(first)).map((r) => r.statusCode),
      [200, 200],
    );
    assert.equal((await send()).statusCode, 200, 'capacity comes back once calls finish');
  });
});

describe('a caller that goes away', () => {
  /** Opens a connection to the listening app and sends `head` and `body` (the rest of a body never comes). */
  const connectAndSend = async (app: ReturnType<typeof build>['app'], head: string, body: string) => {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    socket.write(`POST /sync HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n${head}\r\n${body}`);
    return socket;
  };
  const probe = (app: ReturnType<typeof build>['app']) =>
    app.inject({ method: 'POST', url: '/sync', payload: hookRequest(wasmApp().build()) });

  it('frees its place when it disconnects halfway through its body', async (t) => {
    const { app } = build(t, { maxConcurrentHooks: 1 });
    const socket = await connectAndSend(app, 'Content-Length: 1000\r\n', '{"parent": {');
    await until(async () => (await probe(app)).statusCode === 429, { what: 'the upload holds the only place' });
    socket.destroy();
    await until(async () => (await probe(app)).statusCode === 200, { what: 'the place comes back once the caller is gone' });
  });

  it('is cut off when its body does not arrive whole within the request timeout, freeing its place', async (t) => {
    const { app } = build(t, { maxConcurrentHooks: 1, requestTimeoutMs: 200 });
    const socket = await connectAndSend(app, 'Content-Length: 1000\r\n', '{"parent": {');
    let answer = '';
    let closed = false;
    socket.on('data', (chunk) => (answer += chunk)).on('close', () => (closed = true));
    // The caller does nothing more: only the server can end this connection (or, should the
    // test fail, this finally, so that closing the app does not wait for it).
    await until(() => closed, { what: 'the server closes the connection' }).finally(() => socket.destroy());
    assert.match(answer, /^HTTP\/1\.1 408 /);
    assert.equal((await probe(app)).statusCode, 200, 'the place is free');
  });

  it('is given 30 s by default, with the headers timeout Node needs to enforce it', async (t) => {
    const { app } = build(t);
    await app.listen({ port: 0, host: '127.0.0.1' });
    assert.equal(app.server.requestTimeout, REQUEST_TIMEOUT_MS);
    assert.ok(app.server.headersTimeout <= app.server.requestTimeout, `headersTimeout ${app.server.headersTimeout} ≤ requestTimeout`);
  });

  it("keeps an idle connection open longer than Go's HTTP client does (90 s), its timers counting only requests", async (t) => {
    const { app } = build(t, { requestTimeoutMs: 500 });
    await app.listen({ port: 0, host: '127.0.0.1' });
    assert.equal(app.server.keepAliveTimeout, KEEP_ALIVE_TIMEOUT_MS);
    assert.ok(app.server.keepAliveTimeout > 90_000, `keepAliveTimeout ${app.server.keepAliveTimeout} ms > Go's IdleConnTimeout (90 s)`);
    assert.ok(app.server.headersTimeout <= app.server.requestTimeout, 'Node enforces the request timeout through the headers timeout');
    // One connection, two calls, idle between them for longer than the headers and request
    // timeouts: those count from a request's first byte, so the idle connection stays usable.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    t.after(() => agent.destroy());
    const { port } = app.server.address() as AddressInfo;
    const call = () =>
      new Promise<{ status: number | undefined; socket: unknown }>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path: '/sync', method: 'POST', agent }, (res) => {
          const socket = res.socket;
          res.resume().on('end', () => resolve({ status: res.statusCode, socket }));
        });
        req.on('error', reject).setHeader('content-type', 'application/json');
        req.end(JSON.stringify(hookRequest(wasmApp().build())));
      });
    const first = await call();
    await sleep(3 * app.server.requestTimeout);
    const second = await call();
    assert.deepEqual([first.status, second.status], [200, 200]);
    assert.equal(second.socket, first.socket, 'the second call went over the kept-alive connection');
  });

  it('keeps its place while its call still works after it disconnected, then frees it once', async (t) => {
    const memory = new MemoryLattice();
    let holdNext = true;
    const held: Array<() => void> = [];
    const slow: Lattice = {
      perform: (l, n, a) => {
        if (!holdNext) return memory.perform(l, n, a);
        holdNext = false;
        return new Promise<void>((resolve) => held.push(resolve)).then(() => memory.perform(l, n, a));
      },
    };
    const { app } = build(t, { lattice: slow, maxConcurrentHooks: 1 });
    const body = JSON.stringify(hookRequest(wasmApp().build()));
    const socket = await connectAndSend(app, `Content-Length: ${Buffer.byteLength(body)}\r\n`, body);
    await until(() => held.length === 1, { what: 'the call waits for wadm' });
    assert.equal((await probe(app)).statusCode, 429, 'the waiting call holds the only place');
    socket.destroy();
    const connections = () => new Promise<number>((resolve) => app.server.getConnections((_err, count) => resolve(count)));
    await until(async () => (await connections()) === 0, { what: 'the server sees the caller gone' });
    // Its parsed body and its wadm requests are still in flight: they count until they end.
    assert.equal((await probe(app)).statusCode, 429, 'the abandoned call still holds its place');
    held.shift()!();
    await until(async () => (await probe(app)).statusCode === 200, { what: 'the place comes back once the abandoned call ends' });
    holdNext = true;
    const next = probe(app);
    await until(() => held.length === 1, { what: 'a new call waits for wadm' });
    assert.equal((await probe(app)).statusCode, 429, 'the place was freed once: one call in flight fills it again');
    held.shift()!();
    assert.equal((await next).statusCode, 200);
  });
});

describe('a burst of large bodies', () => {
  /** The hello application's hook request, padded with an annotation to about `bytes` bytes. */
  const padded = (name: string, bytes: number) => {
    const request = hookRequest(wasmApp().named(name).build());
    const size = JSON.stringify(request).length;
    (request.parent.metadata as { annotations?: Record<string, string> }).annotations = {
      padding: 'x'.repeat(Math.max(0, bytes - size - 30)),
    };
    return JSON.stringify(request);
  };

  it('is answered 429 with Retry-After above HOOK_BYTES_IN_FLIGHT, while smaller calls still fit', async (t) => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const memory = new MemoryLattice();
    let waiting = 0;
    const slow: Lattice = { perform: async (l, n, a) => (waiting++, await gate, memory.perform(l, n, a)) };
    const { app, metrics } = build(t, { lattice: slow, hookBytesInFlight: 10_000 });
    const send = (payload: string) =>
      app.inject({ method: 'POST', url: '/sync', headers: { 'content-type': 'application/json' }, payload });
    const [large, other, small] = [padded('large', 6_000), padded('other', 6_000), padded('small', 3_000)];
    const first = send(large);
    await until(() => waiting === 1, { what: () => 'the first call waits for wadm' });
    const refused = await send(other);
    const fits = send(small);
    await until(() => waiting === 2, { what: () => 'the small call waits for wadm beside the first' }).finally(release);
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.headers['retry-after'], '1');
    assert.match(refused.json().message, /hook bodies in flight would exceed 10000 bytes \(HOOK_BYTES_IN_FLIGHT\)/);
    assert.deepEqual(
      (await Promise.all([first, fits])).map((r) => r.statusCode),
      [200, 200],
    );
    assert.equal((await send(other)).statusCode, 200, 'the bytes come back once calls finish');
    assert.match(await metrics.registry.metrics(), /hook_requests_total\{hook="sync",code="429"\} 1/);
  });

  it('counts a call by its Content-Length, or as the body limit when it has none (chunked)', () => {
    assert.equal(declaredBytes('2600', 1024 * 1024), 2600);
    assert.equal(declaredBytes(undefined, 1024 * 1024), 1024 * 1024);
    assert.equal(declaredBytes('99999999999', 1024 * 1024), 1024 * 1024, 'above the limit it is refused 413 anyway');
    assert.equal(declaredBytes('12, 12', 1024 * 1024), 1024 * 1024);
  });

  it('lets one call in alone, however large, up to the body limit', async (t) => {
    const { app } = build(t, { hookBytesInFlight: 1_000 });
    const res = await app.inject({
      method: 'POST',
      url: '/sync',
      headers: { 'content-type': 'application/json' },
      payload: padded('large', 6_000),
    });
    assert.equal(res.statusCode, 200);
  });
});

describe("a hook call's budget", () => {
  it('counts from its arrival: a body that takes the whole budget to come answers LatticeUnavailable and asks wadm nothing', async (t) => {
    const lattice = new MemoryLattice();
    const budgetMs = 100;
    const { app } = build(t, { lattice, budgetMs });
    const body = JSON.stringify(hookRequest(wasmApp().build()));
    // The body's second half comes only after three budgets: a busy CPU or a slow network between
    // the headers and the handler. Timers never fire early, so under load it only comes later.
    async function* slowly() {
      yield body.slice(0, 100);
      await sleep(3 * budgetMs);
      yield body.slice(100);
    }
    const res = await app.inject({
      method: 'POST',
      url: '/sync',
      headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      payload: Readable.from(slowly()),
    });
    assert.equal(res.statusCode, 200);
    const ready = res.json().status.conditions.find((c: { type: string }) => c.type === 'Ready');
    assert.deepEqual([ready.status, ready.reason], ['Unknown', 'LatticeUnavailable']);
    assert.match(ready.message, /\(Timeout\): no time left within this hook call \(100 ms\)/);
    assert.equal(lattice.lattices.length, 0, 'no wadm request was started past the budget');
  });

  it('leaves the rest of the budget to the call once its body came', async (t) => {
    const lattice = new MemoryLattice();
    const { app } = build(t, { lattice });
    const res = await app.inject({ method: 'POST', url: '/sync', payload: hookRequest(wasmApp().build()) });
    assert.equal(res.json().status.phase, 'Reconciling');
    assert.ok(lattice.lattices.length > 0, 'wadm was asked');
  });
});

describe('POST /finalize', () => {
  it('deletes an owned model and answers finalized: true', async (t) => {
    const lattice = new MemoryLattice();
    const { app } = build(t, { lattice });
    await app.inject({ method: 'POST', url: '/sync', payload: hookRequest(wasmApp().build()) });
    assert.ok(lattice.model('hello-world'));
    const res = await app.inject({ method: 'POST', url: '/finalize', payload: hookRequest(wasmApp().build(), { finalizing: true }) });
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

  it('refuses hook calls 429 with Retry-After (no backoff in Metacontroller) while this replica leaves them to a peer, and says why', async (t) => {
    const lattice = new MemoryLattice();
    const { app } = build(t, {
      lattice,
      readiness: () => ({ ready: false, answersHooks: false, reason: 'not connected to NATS for 3 s (grace 30 s)' }),
    });
    const res = await app.inject({ method: 'POST', url: '/sync', payload: hookRequest(wasmApp().build()) });
    assert.equal(res.statusCode, 429);
    assert.equal(res.headers['retry-after'], '1');
    assert.notEqual(res.headers['connection'], 'close', 'no peer is known to answer: a new connection could find no ready replica');
    assert.match(res.json().message, /not connected to NATS for 3 s/);
    assert.equal(lattice.lattices.length, 0, 'nothing was asked of the lattice');
    assert.equal((await app.inject('/readyz')).statusCode, 503);
  });

  it('closes the connection once a peer answers, so that the retry can reach it; only once the whole body has arrived', async (t) => {
    const { app } = build(t, {
      readiness: () => ({ ready: false, answersHooks: false, reason: 'not connected to NATS for 3 s (grace 30 s)', peerAnswers: true }),
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    // 8 MiB: more than the socket buffers hold, so the caller is still sending when the refusal is decided.
    const body = Buffer.alloc(8 * 1024 * 1024, ' ');
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    let failure: Error | undefined;
    socket.on('data', (chunk) => (answer += chunk)).on('error', (err) => (failure = err));
    socket.write(`POST /sync HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
    socket.end(body);
    await new Promise((resolve) => socket.on('close', resolve));
    assert.equal(failure, undefined, 'the caller wrote its whole body');
    assert.match(answer, /^HTTP\/1\.1 429 /);
    assert.match(answer, /\r\nconnection: close\r\n/i);
    assert.match(answer, /\r\nretry-after: 1\r\n/i);
  });

  it('tells peers in one word whether it is connected to NATS (/natsz)', async (t) => {
    assert.deepEqual((await build(t, { ready: true }).app.inject('/natsz')).json(), { connected: true });
    const down = await build(t, { ready: false }).app.inject('/natsz');
    assert.equal(down.statusCode, 503);
    assert.deepEqual(down.json(), { connected: false });
  });

  it('serves Prometheus text with hook counters', async (t) => {
    const { app } = build(t);
    await app.inject({ method: 'POST', url: '/sync', payload: hookRequest(wasmApp().build()) });
    const res = await app.inject('/metrics');
    assert.match(String(res.headers['content-type']), /text\/plain/);
    assert.match(res.body, /wasmcloud_metacontroller_hook_requests_total\{hook="sync",code="200"\} 1/);
  });
});

describe('rejected calls', () => {
  const count = async (metrics: Metrics, hook: string, code: string) =>
    (await metrics.hookRequests.get()).values.find((v) => v.labels.hook === hook && v.labels.code === code)?.value ?? 0;
  const json = { 'content-type': 'application/json' };

  it('all answer {error, message} with our own names, never a framework code', async (t) => {
    const { app } = build(t, { bodyLimit: 1024, authorize: (h) => h !== 'Bearer wrong' });
    const cases: [number, string, InjectOptions][] = [
      [400, 'MalformedJSON', { method: 'POST', url: '/sync', headers: json, payload: '{"parent":' }],
      [400, 'MalformedJSON', { method: 'POST', url: '/sync', headers: json, payload: '' }],
      [400, 'BadRequest', { method: 'POST', url: '/sync', headers: json, payload: '{}' }],
      [401, 'Unauthorized', { method: 'POST', url: '/sync', headers: { ...json, authorization: 'Bearer wrong' }, payload: '{}' }],
      [404, 'NotFound', { method: 'GET', url: '/nothing-here' }],
      [405, 'MethodNotAllowed', { method: 'GET', url: '/sync' }],
      [405, 'MethodNotAllowed', { method: 'PUT', url: '/finalize?x=1', headers: json, payload: '{}' }],
      [413, 'PayloadTooLarge', { method: 'POST', url: '/sync', headers: json, payload: JSON.stringify({ x: 'y'.repeat(2048) }) }],
      [415, 'UnsupportedMediaType', { method: 'POST', url: '/finalize', headers: { 'content-type': 'text/plain' }, payload: 'hello' }],
    ];
    for (const [status, error, request] of cases) {
      const res = await app.inject(request);
      const what = `${String(request.method)} ${String(request.url)}`;
      assert.equal(res.statusCode, status, what);
      assert.deepEqual(Object.keys(res.json()), ['error', 'message'], what);
      assert.equal(res.json().error, error, what);
      assert.doesNotMatch(res.body, /FST_/, what);
    }
  });

  it('answers a wrong method on a hook path with 405 and Allow: POST', async (t) => {
    const { app } = build(t);
    for (const url of ['/sync', '/finalize']) {
      const res = await app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 405);
      assert.equal(res.headers['allow'], 'POST');
    }
  });

  it('answers 429 with Retry-After in the one shape while the server closes, and closes the connection', async (t) => {
    const { app } = build(t);
    await app.ready();
    const closed = app.close();
    const res = await app.inject({ method: 'POST', url: '/sync', payload: hookRequest(wasmApp().build()) });
    await closed;
    assert.equal(res.statusCode, 429);
    assert.equal(res.headers['retry-after'], '1');
    assert.equal(res.headers['connection'], 'close');
    assert.deepEqual(res.json(), { error: 'TooManyRequests', message: 'the service is shutting down; retry' });
  });

  it('are counted by hook and code, and logged at warn without the body or the token', async (t) => {
    const { app, metrics, lines } = build(t, { bodyLimit: 1024, authorize: (h) => h === 'Bearer right' });
    const auth = { ...json, authorization: 'Bearer right' };
    await app.inject({ method: 'POST', url: '/sync', headers: { ...json, authorization: 'Bearer s3cret-token' }, payload: '{}' });
    await app.inject({ method: 'POST', url: '/sync', headers: auth, payload: '{"secret-body":' });
    await app.inject({ method: 'POST', url: '/finalize', headers: auth, payload: JSON.stringify({ x: 'secret-body'.repeat(200) }) });
    await app.inject({
      method: 'POST',
      url: '/finalize',
      headers: { authorization: 'Bearer right', 'content-type': 'text/plain' },
      payload: 'secret-body',
    });
    await app.inject({ method: 'GET', url: '/finalize', headers: auth });
    assert.equal(await count(metrics, 'sync', '401'), 1);
    assert.equal(await count(metrics, 'sync', '400'), 1);
    assert.equal(await count(metrics, 'finalize', '413'), 1);
    assert.equal(await count(metrics, 'finalize', '415'), 1);
    assert.equal(await count(metrics, 'finalize', '405'), 1);
    const warnings = lines.filter((l) => l['msg'] === 'hook call rejected');
    assert.deepEqual(
      warnings.map((l) => [l['level'], l['hook'], l['code'], l['error']]),
      [
        [40, 'sync', 401, 'Unauthorized'],
        [40, 'sync', 400, 'MalformedJSON'],
        [40, 'finalize', 413, 'PayloadTooLarge'],
        [40, 'finalize', 415, 'UnsupportedMediaType'],
        [40, 'finalize', 405, 'MethodNotAllowed'],
      ],
    );
    assert.doesNotMatch(JSON.stringify(lines), /s3cret-token|secret-body/);
  });

  it('log at most one line per code per 10 s, then say how many were not logged', async (t) => {
    let clock = 1_000_000;
    const { app, metrics, lines } = build(t, { now: () => clock });
    const malformed = () => app.inject({ method: 'POST', url: '/sync', headers: json, payload: '{' });
    for (let i = 0; i < 5; i++) await malformed();
    await app.inject({ method: 'GET', url: '/sync' });
    clock += 9_999;
    await malformed();
    clock += 1;
    await malformed();
    const warnings = lines.filter((l) => l['msg'] === 'hook call rejected').map((l) => [l['code'], l['suppressed']]);
    assert.deepEqual(warnings, [
      [400, undefined],
      [405, undefined],
      [400, 5],
    ]);
    assert.equal(await count(metrics, 'sync', '400'), 7, 'every rejection is counted, logged or not');
  });
});
