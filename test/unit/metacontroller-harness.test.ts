// The Metacontroller emulator's rules that the service tests rely on, against a tiny Fastify hook server. The
// in-memory API server's own rules are checked against kube-apiserver in test/kube/metacontroller.test.ts.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import Fastify, { type FastifyReply } from 'fastify';
import { FakeMetacontroller, condition, type K8sObject } from '../support/metacontroller.js';
import { ControllerRateLimiter, MetacontrollerQueue } from '../support/metacontroller/workqueue.js';
import { testClock } from '../support/clock.js';

const RESOURCE = { apiVersion: 'core.wasmcloud.com/v1beta1', kind: 'WasmCloudApplication' } as const;
const NS = 'apps';
const NAME = 'hello';

interface HookRequest {
  controller: Record<string, any>;
  parent: K8sObject;
  children: unknown;
  related: unknown;
  finalizing: boolean;
}
/** Returns the reply body: an object is sent as JSON, a string as raw JSON text. */
type Handler = (request: HookRequest, reply: FastifyReply, call: number) => unknown;

async function hookServer(t: TestContext, handlers: { sync: Handler; finalize?: Handler }) {
  const app = Fastify();
  const received: { path: string; body: HookRequest; headers: Record<string, unknown> }[] = [];
  for (const [path, handler] of Object.entries(handlers)) {
    let calls = 0;
    app.post(`/${path}`, async (req, reply) => {
      received.push({ path, body: req.body as HookRequest, headers: req.headers });
      const answer = await handler(req.body as HookRequest, reply, ++calls);
      return typeof answer === 'string' ? reply.type('application/json').send(answer) : answer;
    });
  }
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return { syncUrl: `${base}/sync`, ...(handlers.finalize ? { finalizeUrl: `${base}/finalize` } : {}), received };
}

function emulator(urls: { syncUrl: string; finalizeUrl?: string }, options: { etag?: boolean; now?: () => number } = {}) {
  const mc = new FakeMetacontroller({ ...urls, resource: RESOURCE, ...options });
  mc.apply({ ...RESOURCE, metadata: { name: NAME, namespace: NS, labels: { team: 'edge' } }, spec: { manifest: 'hello' } });
  return mc;
}

const deployed = () => ({ status: { phase: 'Deployed' }, children: [] });

test('the hook status replaces the stored status with observedGeneration, and is written only when it changes', async (t) => {
  const ready = { type: 'Ready', status: 'True' };
  const answers: unknown[] = [
    { status: { phase: 'Deployed', at: { a: 1, b: 2 }, conditions: [ready] } },
    { status: { conditions: [ready], at: { b: 2, a: 1 }, phase: 'Deployed' } },
    { Status: {} },
    'null',
  ];
  const mc = emulator(await hookServer(t, { sync: (_req, _reply, call) => answers[call - 1] }));
  const passes = [];
  for (let i = 0; i < answers.length; i++) {
    passes.push((await mc.reconcile(NS, NAME)).statusChanged);
    if (i === 0) assert.deepEqual(condition(mc.get(NS, NAME), 'Ready'), ready);
  }
  assert.deepEqual(passes, [true, false, true, false], 'key order does not count; "Status" is not "status"');
  assert.deepEqual(mc.get(NS, NAME)?.status, { observedGeneration: 1 }, 'no status in the answer wipes it; null is like {}');
  assert.equal(mc.statusWrites, 2);
});

test('the request carries the shipped CompositeController, the parent, no children and the finalizing flag', async (t) => {
  const server = await hookServer(t, { sync: deployed, finalize: () => ({ finalized: true }) });
  const mc = emulator(server);
  const run = await mc.reconcileUntilStable(NS, NAME);
  assert.deepEqual([run.passes, run.statusWrites, run.stable], [2, 1, true], 'a deterministic hook settles in two passes');
  const [first, second] = server.received;
  assert.deepEqual(Object.keys(first!.body), ['controller', 'parent', 'children', 'related', 'finalizing']);
  assert.deepEqual([first!.body.children, first!.body.related, first!.body.finalizing], [{}, {}, false]);
  assert.equal(first!.headers['content-type'], 'application/json');
  assert.deepEqual(first!.body.controller['spec'].hooks.sync, { webhook: { url: server.syncUrl, timeout: '10s' } });
  assert.equal(first!.body.controller['spec'].parentResource.resource, 'wasmcloudapplications');
  assert.deepEqual(first!.body.parent.metadata.finalizers, [mc.finalizerName], 'the finalizer is added before the first sync');
  assert.equal(mc.finalizerName, 'metacontroller.io/compositecontroller-wasmcloudapplication-controller');
  assert.deepEqual(second!.body.parent.status, { phase: 'Deployed', observedGeneration: 1 });
});

test('deletion calls finalize until it answers finalized: true, which lets the parent go', async (t) => {
  const server = await hookServer(t, {
    sync: deployed,
    finalize: (_req, _reply, call) => ({ status: { phase: 'Deleting' }, finalized: call >= 2 }),
  });
  const mc = emulator(server);
  await mc.reconcileUntilStable(NS, NAME);
  const gone = await mc.deleteAndFinalize(NS, NAME);
  assert.deepEqual(
    gone.results.map((r) => [r.hook, r.finalized ?? false, r.removed]),
    [
      ['finalize', false, false],
      ['finalize', true, true],
    ],
  );
  assert.equal(mc.get(NS, NAME), undefined);
  assert.ok(
    server.received.filter((r) => r.path === 'finalize').every((r) => r.body.finalizing && r.body.parent.metadata.deletionTimestamp),
  );
  assert.equal((await mc.reconcile(NS, NAME)).hook, undefined, 'nothing is called for a parent that is gone');
});

test('without a finalize hook there is no finalizer, and deleting removes the parent at once', async (t) => {
  const mc = emulator(await hookServer(t, { sync: deployed }));
  await mc.reconcile(NS, NAME);
  assert.equal(mc.get(NS, NAME)?.metadata.finalizers, undefined);
  assert.deepEqual(await mc.deleteAndFinalize(NS, NAME), { passes: 0, removed: true, object: undefined, results: [] });
});

test('a non-200 answer, bad JSON or a refused connection leave the status alone and back off exponentially', async (t) => {
  const boom: Handler = (_req, reply) => reply.code(500).send('boom');
  const answers: Handler[] = [deployed, boom, (_req, reply) => reply.code(201).send(deployed()), () => '{"status":', deployed, boom];
  const mc = emulator(await hookServer(t, { sync: (req, reply, call) => answers[call - 1]!(req, reply, call) }));
  await mc.reconcile(NS, NAME);
  const stored = mc.get(NS, NAME)?.status;
  const failed = [await mc.reconcile(NS, NAME), await mc.reconcile(NS, NAME), await mc.reconcile(NS, NAME)];
  assert.deepEqual(
    failed.map((r) => [r.httpStatus, r.backoffMs]),
    [
      [500, 5],
      [201, 10],
      [200, 20],
    ],
  );
  assert.equal(failed[0]!.error, 'sync hook failed: unsupported status code: 500 body: boom');
  assert.match(failed[2]!.error ?? '', /^sync hook failed: can't unmarshal webhookResponse/);
  assert.deepEqual(mc.get(NS, NAME)?.status, stored);
  assert.equal((await mc.reconcile(NS, NAME)).error, undefined);
  assert.equal((await mc.reconcile(NS, NAME)).backoffMs, 5, 'a success forgot the failures');

  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const refused = await emulator({ syncUrl: `http://127.0.0.1:${port}/sync` }).reconcile(NS, NAME);
  assert.equal(refused.httpStatus, undefined);
  assert.match(refused.error ?? '', /^sync hook failed: Post "http:\/\/127\.0\.0\.1:\d+\/sync": .*ECONNREFUSED/);
});

test('a 429 requeues after Retry-After seconds or an HTTP date, after 0 s otherwise, and is no failure', async (t) => {
  const values = ['7', 'Thu, 01 Jan 2026 00:00:30 GMT', undefined, '1.5'];
  const server = await hookServer(t, {
    sync: (_req, reply, call) => {
      const value = values[call - 1];
      if (value !== undefined) reply.header('retry-after', value);
      return reply.code(429).send(deployed());
    },
  });
  const mc = emulator(server, { now: () => Date.parse('2026-01-01T00:00:00Z') });
  const passes = [];
  for (let i = 0; i < values.length; i++) passes.push(await mc.reconcile(NS, NAME));
  assert.deepEqual(
    passes.map((r) => [r.retryAfterSeconds, r.backoffMs]),
    [
      [7, undefined],
      [30, undefined],
      [0, undefined],
      [0, undefined],
    ],
  );
  assert.equal(mc.get(NS, NAME)?.status, undefined);
});

test('resyncAfterSeconds schedules more passes, slept in real mode, until the hook stops asking', async (t) => {
  const mc = emulator(
    await hookServer(t, {
      sync: (_req, _reply, call) => (call <= 2 ? { status: { ready: false }, resyncAfterSeconds: 0.03 } : { status: { ready: true } }),
    }),
  );
  const started = performance.now();
  const run = await mc.reconcileUntilStable(NS, NAME, { honourResync: 'real' });
  assert.deepEqual(
    run.results.map((r) => [r.statusChanged, r.resyncAfterSeconds]),
    [
      [true, 0.03],
      [false, 0.03],
      [true, undefined],
      [false, undefined],
    ],
  );
  assert.ok(performance.now() - started >= 25, 'the resync after the quiet pass was slept');
});

test('a status that changes on every call, even only in array order, is reported as a hot loop', async (t) => {
  const mc = emulator(await hookServer(t, { sync: (_req, _reply, call) => ({ status: { apps: call % 2 ? ['a', 'b'] : ['b', 'a'] } }) }));
  await assert.rejects(
    mc.reconcileUntilStable(NS, NAME, { maxPasses: 6 }),
    /apps\/hello did not settle within 6 passes[\s\S]*last statuses:[\s\S]*"apps"/,
  );
});

test('with etag on, If-None-Match carries the cached ETag and a 304 applies the cached answer', async (t) => {
  const server = await hookServer(t, {
    sync: (_req, reply) =>
      reply.request.headers['if-none-match'] === '"v1"' ? reply.code(304).send() : reply.header('etag', '"v1"').send(deployed()),
  });
  const mc = emulator(server, { etag: true });
  const passes = [await mc.reconcile(NS, NAME), await mc.reconcile(NS, NAME)];
  assert.deepEqual(
    passes.map((r) => [r.httpStatus, r.statusChanged]),
    [
      [200, true],
      [304, false],
    ],
  );
  assert.equal(mc.etagHits, 1);
  assert.equal(server.received[1]!.headers['if-none-match'], '"v1"');
});

test('children or finalized: true from sync break the hook contract and fail the pass', async (t) => {
  const children = emulator(
    await hookServer(t, { sync: () => ({ children: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }] }) }),
  );
  await assert.rejects(children.reconcile(NS, NAME), /returned children/);
  const finalized = emulator(await hookServer(t, { sync: () => ({ finalized: true }) }));
  await assert.rejects(finalized.reconcile(NS, NAME), /the sync hook returned finalized: true/);
});

test('waitFor keeps reconciling until a change outside the cluster shows in the status', async (t) => {
  let calls = 0;
  const mc = emulator(await hookServer(t, { sync: () => ({ status: { phase: ++calls >= 3 ? 'Deployed' : 'Pending' } }) }));
  const seen = await mc.waitFor(NS, NAME, (obj) => obj?.status?.['phase'] === 'Deployed', { intervalMs: 1 });
  assert.equal(seen.passes, 3);
  await assert.rejects(
    mc.waitFor(NS, NAME, () => false, { timeoutMs: 20, intervalMs: 1 }),
    /not reached within 20 ms: apps\/hello after \d+ passes/,
  );
});

// The workqueue (metacontroller/workqueue.ts): when passes come, on a test clock.

test("the rate limiter is client-go's default: 5 ms doubling per failure up to 1000 s, and a 10/s bucket of 100 shared by all keys", () => {
  const clock = testClock();
  const limiter = new ControllerRateLimiter(clock.now);
  const one = Array.from({ length: 20 }, () => limiter.when('a'));
  assert.deepEqual(one.slice(0, 4), [5, 10, 20, 40]);
  assert.equal(one[12], 20_480, 'the 13th failure in a row waits ~20 s, as measured against v4.17.2');
  assert.deepEqual(one.slice(17), [655_360, 1_000_000, 1_000_000]);
  limiter.forget('a');
  assert.equal(limiter.when('a'), 5, 'Forget drops the failures');
  // 120 keys failing at one instant: the bucket's burst (100, one used above by each of 21 calls of 'a') runs out.
  const fresh = new ControllerRateLimiter(clock.now);
  const many = Array.from({ length: 150 }, (_, i) => fresh.when(`k${i}`));
  assert.deepEqual([many[0], many[99], many[100], many[149]], [5, 5, 100, 5_000]);
  clock.advance(10_000);
  assert.equal(fresh.when('late'), 5, '10 s later the bucket holds 50 tokens again');
});

test('the queue runs passes when Metacontroller would: backoff on errors, Retry-After and resyncAfterSeconds exactly, writes at once', async (t) => {
  const script: ((reply: FastifyReply) => unknown)[] = [
    (reply) => reply.code(503).send({}),
    (reply) => reply.code(503).send({}),
    (reply) => reply.code(429).header('retry-after', '3').send({}),
    (reply) => reply.code(503).send({}),
    () => ({ status: { phase: 'Deployed' }, resyncAfterSeconds: 0.5 }),
    () => ({ status: { phase: 'Deployed' } }),
    () => ({ status: { phase: 'Deployed' } }),
  ];
  const clock = testClock();
  const mc = emulator(await hookServer(t, { sync: (_req, reply, call) => script[call - 1]!(reply) }), { now: clock.now });
  const queue = new MetacontrollerQueue(mc, clock, { resyncPeriodMs: 60_000 });
  const start = clock.now();
  queue.add(NS, NAME);
  assert.equal(await queue.run(() => queue.passes.length === 7, start + 59_000), true);
  assert.deepEqual(
    queue.passes.map((p) => [p.at - start, p.result.httpStatus ?? 'none', p.rateLimitedMs ?? null]),
    [
      [0, 503, 5],
      [5, 503, 10],
      [15, 429, null],
      [3015, 503, 5],
      [3020, 200, null],
      [3020, 200, null],
      [3520, 200, null],
    ],
    'failures back off 5, 10 ms; the 429 comes back after exactly 3 s and forgets them; the status write queues a pass at once, the resync 0.5 s later',
  );
});

test('the informer resync queues every parent each period, cutting a long backoff short', async (t) => {
  const clock = testClock();
  const mc = emulator(await hookServer(t, { sync: (_req, reply) => reply.code(500).send({}) }), { now: clock.now });
  const start = clock.now();
  const queue = new MetacontrollerQueue(mc, clock, { resyncPeriodMs: 60_000, firstResyncAt: start + 60_000 });
  queue.track(NS, NAME);
  await queue.run(() => false, start + 59_999);
  assert.equal(queue.passes.length, 0, 'tracked, not queued');
  await queue.run(() => false, start + 180_001);
  const times = queue.passes.map((p) => p.at - start);
  // 5 ms · 2ⁿ: the 14th failure waits 41 s, the 15th 82 s; the resyncs at 120 s and 180 s come sooner.
  assert.ok(times.includes(120_000) && times.includes(180_000), times.join(', '));
  assert.ok(queue.passes.every((p) => p.rateLimitedMs !== undefined));
});
