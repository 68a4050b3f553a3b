// Tests of the fake Metacontroller itself, against a tiny Fastify hook server on a free port.
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import type { FastifyReply } from 'fastify';
import { ApiError, FakeMetacontroller, condition } from './support/metacontroller.js';
import type { FakeMetacontrollerOptions, K8sObject } from './support/metacontroller.js';

const RESOURCE = { apiVersion: 'core.wasmcloud.com/v1beta1', kind: 'WasmCloudApplication' } as const;
const NS = 'apps';
const NAME = 'hello';

interface HookRequest {
  controller: Record<string, unknown>;
  parent: K8sObject;
  children: Record<string, unknown>;
  related: Record<string, unknown>;
  finalizing: boolean;
}
interface Received { path: string; raw: string; body: HookRequest; headers: IncomingHttpHeaders }
/** Returns the reply body: an object is sent as JSON, a string as raw JSON text. */
type Handler = (request: HookRequest, reply: FastifyReply, call: number) => unknown;

async function hookServer(t: TestContext, handlers: { sync: Handler; finalize?: Handler }) {
  const app = Fastify();
  const received: Received[] = [];
  // Keep the raw text: key order and escaping are part of what is asserted.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  const route = (path: string, handler: Handler): void => {
    let calls = 0;
    app.post(path, async (req, reply) => {
      const raw = req.body as string;
      const body = JSON.parse(raw) as HookRequest;
      received.push({ path, raw, body, headers: req.headers });
      calls += 1;
      const answer = await handler(body, reply, calls);
      return typeof answer === 'string' ? reply.type('application/json').send(answer) : answer;
    });
  };
  route('/sync', handlers.sync);
  if (handlers.finalize) route('/finalize', handlers.finalize);
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return { syncUrl: `${base}/sync`, finalizeUrl: handlers.finalize ? `${base}/finalize` : undefined, received };
}

function metacontroller(urls: { syncUrl: string; finalizeUrl?: string | undefined }, options: Partial<FakeMetacontrollerOptions> = {}) {
  return new FakeMetacontroller({
    syncUrl: urls.syncUrl,
    ...(urls.finalizeUrl === undefined ? {} : { finalizeUrl: urls.finalizeUrl }),
    resource: RESOURCE,
    ...options,
  });
}

function application(spec: Record<string, unknown> = { manifest: 'hello', replicas: 1 }, labels = { team: 'edge' }) {
  return { ...RESOURCE, metadata: { name: NAME, namespace: NS, labels, annotations: { 'example.com/note': 'a < b & c' } }, spec };
}

test('the hook status replaces the stored status and observedGeneration is injected', async (t) => {
  const answers: unknown[] = [{ status: { phase: 'Deployed' }, children: [] }, { children: [] }, 'null'];
  const server = await hookServer(t, { sync: (_req, _reply, call) => answers[call - 1] });
  const mc = metacontroller(server);
  mc.apply(application());
  mc.setStatus(NS, NAME, { phase: 'Old', leftover: true, observedGeneration: 0 });

  const first = await mc.reconcile(NS, NAME);
  assert.equal(first.statusChanged, true);
  assert.deepEqual(mc.get(NS, NAME)?.status, { phase: 'Deployed', observedGeneration: 1 });

  await mc.reconcile(NS, NAME);
  assert.deepEqual(mc.get(NS, NAME)?.status, { observedGeneration: 1 }, 'no status in the response wipes the status');

  const third = await mc.reconcile(NS, NAME);
  assert.equal(third.statusChanged, false, 'a body of null behaves like {}');
  assert.equal(third.childrenArray, false);
  assert.equal(mc.statusWrites, 2);
});

test('generation changes only when the spec changes, while resourceVersion changes on every write', async (t) => {
  const server = await hookServer(t, { sync: () => ({ status: { phase: 'Deployed' }, children: [] }) });
  const mc = metacontroller(server);
  const created = mc.apply(application({ manifest: 'hello', replicas: 1 }));
  assert.equal(created.metadata.generation, 1);
  assert.equal(created.status, undefined);
  const rv = (): number => Number(mc.get(NS, NAME)?.metadata.resourceVersion);

  const before = rv();
  mc.apply(application({ replicas: 1, manifest: 'hello' }));
  assert.equal(rv(), before, 'an identical apply (keys reordered) is not a write');

  mc.apply(application({ manifest: 'hello', replicas: 1 }, { team: 'core' }));
  assert.equal(mc.get(NS, NAME)?.metadata.generation, 1, 'labels are metadata');
  assert.ok(rv() > before);

  mc.apply(application({ manifest: 'hello', replicas: 2 }));
  assert.equal(mc.get(NS, NAME)?.metadata.generation, 2);

  const beforeStatus = rv();
  await mc.reconcile(NS, NAME);
  const after = mc.get(NS, NAME);
  assert.equal(after?.metadata.generation, 2, 'status is a subresource');
  assert.ok(rv() > beforeStatus);
  assert.equal(after?.status?.['observedGeneration'], 2);
  assert.deepEqual(mc.apply({ ...application({ manifest: 'hello', replicas: 2 }), status: { phase: 'Forged' } }).status,
    after?.status, 'apply never touches status');
});

test('the finalizer is added before the first sync and removed when the finalize hook answers finalized: true', async (t) => {
  const server = await hookServer(t, {
    sync: () => ({ status: { phase: 'Deployed' }, children: [] }),
    finalize: (_req, _reply, call) => ({ status: { phase: 'Deleting' }, children: [], finalized: call >= 2 }),
  });
  const mc = metacontroller(server);
  mc.apply(application());

  const first = await mc.reconcile(NS, NAME);
  assert.equal(first.hook, 'sync');
  assert.equal(first.finalizerChanged, true);
  assert.deepEqual(server.received[0]?.body.parent.metadata.finalizers, [mc.finalizerName]);
  assert.equal(mc.finalizerName, 'metacontroller.io/compositecontroller-wasmcloudapplication-controller');
  assert.equal(mc.get(NS, NAME)?.metadata.generation, 1, 'a finalizer write does not bump generation');

  assert.equal(mc.delete(NS, NAME).removed, false);
  const deleting = mc.get(NS, NAME);
  assert.ok(deleting?.metadata.deletionTimestamp);
  assert.equal(deleting?.metadata.deletionGracePeriodSeconds, 0);
  assert.equal(deleting?.metadata.generation, 2, 'the API server bumps generation when deletion starts');

  const finalized = await mc.deleteAndFinalize(NS, NAME);
  assert.equal(finalized.removed, true);
  assert.deepEqual(finalized.results.map((r) => [r.hook, r.finalized ?? false, r.removed]),
    [['finalize', false, false], ['finalize', true, true]]);
  const finalizeCalls = server.received.filter((r) => r.path === '/finalize');
  assert.equal(finalizeCalls.length, 2);
  assert.ok(finalizeCalls.every((r) => r.body.finalizing && r.body.parent.metadata.deletionTimestamp));
  assert.equal(mc.get(NS, NAME), undefined);
});

test('deleting a parent without finalizers removes it at once, and a foreign finalizer keeps the sync hook in charge', async (t) => {
  const server = await hookServer(t, { sync: () => ({ status: {}, children: [] }) });
  const mc = metacontroller(server);
  mc.apply(application());
  await mc.reconcile(NS, NAME);
  assert.equal(mc.get(NS, NAME)?.metadata.finalizers, undefined, 'no finalize hook, no finalizer');
  assert.equal(mc.delete(NS, NAME).removed, true);
  assert.equal(mc.get(NS, NAME), undefined);
  const gone = await mc.reconcile(NS, NAME);
  assert.equal(gone.hook, undefined);
  assert.equal(mc.hookCalls, 1);
  assert.throws(() => mc.delete(NS, NAME), (e: unknown) => e instanceof ApiError && e.code === 404);

  mc.apply({ ...application(), metadata: { ...application().metadata, finalizers: ['example.com/keep'] } });
  mc.delete(NS, NAME);
  const pass = await mc.reconcile(NS, NAME);
  assert.equal(pass.hook, 'sync', 'without a finalize hook a deleting parent still gets sync');
  assert.equal(server.received.at(-1)?.body.finalizing, false);
  assert.throws(() => mc.apply({ ...application(), metadata: { ...application().metadata, finalizers: ['example.com/keep', 'x/new'] } }),
    (e: unknown) => e instanceof ApiError && e.code === 422 && /no new finalizers can be added/.test(e.message));
});

test('a 500 or a 201 leaves the status untouched, records a SyncError and backs off exponentially', async (t) => {
  const server = await hookServer(t, {
    sync: (_req, reply, call) => {
      if (call === 2) return reply.code(500).send('boom');
      if (call === 3) return reply.code(201).send({ status: { phase: 'Created?' }, children: [] });
      return { status: { phase: 'Deployed' }, children: [] };
    },
  });
  const mc = metacontroller(server);
  mc.apply(application());
  await mc.reconcile(NS, NAME);
  const stored = mc.get(NS, NAME)?.status;

  const failed = await mc.reconcile(NS, NAME);
  assert.equal(failed.httpStatus, 500);
  assert.equal(failed.error, 'sync hook failed (version=v1): unsupported status code: 500 body: boom');
  assert.equal(failed.backoffMs, 5);
  const created = await mc.reconcile(NS, NAME);
  assert.equal(created.httpStatus, 201);
  assert.equal(created.backoffMs, 10);
  assert.deepEqual(mc.get(NS, NAME)?.status, stored);
  assert.deepEqual(mc.events.map((e) => [e.type, e.reason, e.source]),
    [['Warning', 'SyncError', 'metacontroller'], ['Warning', 'SyncError', 'metacontroller']]);
  assert.match(mc.events[0]?.message ?? '', /^Sync error: sync hook failed/);
  assert.equal(mc.retries(NS, NAME), 2);

  await mc.reconcile(NS, NAME);
  assert.equal(mc.retries(NS, NAME), 0, 'a successful sync forgets the failures');
  assert.deepEqual(mc.calls.map((c) => c.httpStatus), [200, 500, 201, 200]);
  assert.ok(mc.calls.every((c) => c.requestBytes > 0 && c.durationMs >= 0));
});

test('a 429 requeues after Retry-After seconds or an HTTP date, and after 0 s without the header', async (t) => {
  const retryAfter = ['7', 'Thu, 01 Jan 2026 00:00:30 GMT', undefined, '1.5'];
  const server = await hookServer(t, {
    sync: (_req, reply, call) => {
      const value = retryAfter[(call - 1) % retryAfter.length];
      if (value !== undefined) reply.header('retry-after', value);
      return reply.code(429).send({ status: { phase: 'ignored' } });
    },
  });
  const mc = metacontroller(server, { now: () => new Date('2026-01-01T00:00:00Z') });
  mc.apply(application());

  const waits: Array<number | undefined> = [];
  for (let i = 0; i < 4; i += 1) waits.push((await mc.reconcile(NS, NAME)).retryAfterSeconds);
  assert.deepEqual(waits, [7, 30, 0, 0]);
  assert.equal(mc.get(NS, NAME)?.status, undefined);
  assert.deepEqual(mc.events, [], '429 records no event');
  assert.equal(mc.retries(NS, NAME), 0, 'and does not count as a failure');
  await assert.rejects(mc.reconcileUntilStable(NS, NAME, { maxPasses: 5 }), /did not settle within 5 passes[\s\S]*Retry-After/);
});

test('resyncAfterSeconds schedules another pass until the hook stops asking', async (t) => {
  const server = await hookServer(t, {
    sync: (_req, _reply, call) => (call <= 2
      ? { status: { ready: false }, children: [], resyncAfterSeconds: 0.03 }
      : { status: { ready: true }, children: [] }),
  });
  const mc = metacontroller(server);
  mc.apply(application());
  const started = performance.now();
  const run = await mc.reconcileUntilStable(NS, NAME, { honourResync: 'real' });
  assert.deepEqual(run.results.map((r) => [r.statusChanged, r.resyncAfterSeconds]),
    [[true, 0.03], [false, 0.03], [true, undefined], [false, undefined]]);
  assert.equal(run.stable, true);
  assert.equal(run.statusWrites, 2);
  assert.ok(performance.now() - started >= 25, 'the resync delay after the quiet pass is slept in real mode');

  const other = metacontroller(await hookServer(t, {
    sync: (_req, _reply, call) => ({ status: { ready: call >= 3 }, children: [], resyncAfterSeconds: 10 }),
  }));
  other.apply(application());
  const ready = await other.reconcileUntilStable(NS, NAME, { untilReady: (obj) => obj.status?.['ready'] === true });
  assert.equal(ready.passes, 3, 'immediate mode does not wait the 10 s');
  assert.equal(ready.stable, false, 'the hook still asks for a resync');
});

test('a status with a timestamp that changes on every call is reported as a hot loop', async (t) => {
  const server = await hookServer(t, {
    sync: () => ({ status: { phase: 'Deployed', lastSeen: new Date().toISOString() + Math.random() }, children: [] }),
  });
  const mc = metacontroller(server);
  mc.apply(application());
  await assert.rejects(mc.reconcileUntilStable(NS, NAME), (error: Error) => {
    assert.match(error.message, /apps\/hello did not settle within 20 passes/);
    assert.match(error.message, /last statuses:[\s\S]*lastSeen/);
    return true;
  });
  assert.equal(mc.hookCalls, 20);
});

test('a deterministic hook settles within two passes', async (t) => {
  const server = await hookServer(t, {
    sync: (req) => ({ status: { phase: 'Deployed', conditions: [{ type: 'Ready', status: 'True', reason: 'Deployed' }], seen: req.parent.spec }, children: [] }),
    finalize: () => ({ children: [], finalized: true }),
  });
  const mc = metacontroller(server);
  mc.apply(application());
  const run = await mc.reconcileUntilStable(NS, NAME);
  assert.equal(run.passes, 2);
  assert.equal(run.stable, true);
  assert.equal(run.statusWrites, 1);
  assert.equal(mc.hookCalls, 2);
  assert.equal(condition(run.object, 'Ready')?.status, 'True');
  assert.equal(condition(run.object, 'Missing'), undefined);
});

test('key order inside the status does not matter to the comparison but array order does', async (t) => {
  const keyFlip = await hookServer(t, {
    sync: (_req, _reply, call) => ({ status: call % 2 ? { a: 1, b: { c: 2, d: 3 } } : { b: { d: 3, c: 2 }, a: 1 }, children: [] }),
  });
  const stable = metacontroller(keyFlip);
  stable.apply(application());
  assert.equal((await stable.reconcileUntilStable(NS, NAME)).passes, 2);

  const arrayFlip = await hookServer(t, {
    sync: (_req, _reply, call) => ({ status: { apps: call % 2 ? ['a', 'b'] : ['b', 'a'] }, children: [] }),
  });
  const looping = metacontroller(arrayFlip);
  looping.apply(application());
  await assert.rejects(looping.reconcileUntilStable(NS, NAME, { maxPasses: 6 }), /did not settle within 6 passes/);
});

test('strict decoding rejects unknown top-level and duplicate fields that loose decoding only ignores', async (t) => {
  const server = await hookServer(t, { sync: () => ({ status: { phase: 'Deployed' }, children: [], message: 'hello' }) });
  const v2 = metacontroller(server, { hookVersion: 'v2' });
  v2.apply(application());
  const rejected = await v2.reconcile(NS, NAME);
  assert.equal(rejected.error,
    'sync hook failed (version=v2): strict validation failed for v2 webhookResponse (type: sync, mode: strict): unknown field "message"');
  assert.equal(v2.get(NS, NAME)?.status, undefined);
  assert.equal(v2.events[0]?.reason, 'SyncError');

  const v1 = metacontroller(server);
  v1.apply(application());
  const accepted = await v1.reconcile(NS, NAME);
  assert.equal(accepted.error, undefined);
  assert.deepEqual(accepted.decodeWarnings, ['unknown field "message"']);

  const duplicates = await hookServer(t, { sync: () => '{"status":{"phase":"A","phase":"B"},"children":[]}' });
  const strictV1 = metacontroller(duplicates, { strict: true });
  strictV1.apply(application());
  assert.match((await strictV1.reconcile(NS, NAME)).error ?? '', /duplicate field "status\.phase"/);
  assert.deepEqual((strictV1.controller['spec'] as { hooks: { sync: { webhook: unknown } } }).hooks.sync.webhook,
    { url: duplicates.syncUrl, timeout: '10s', responseUnMarshallMode: 'strict' });

  const miscased = await hookServer(t, { sync: () => ({ Status: { phase: 'Deployed' }, Children: [] }) });
  const loose = metacontroller(miscased);
  loose.apply(application());
  const pass = await loose.reconcile(NS, NAME);
  assert.deepEqual(loose.get(NS, NAME)?.status, { observedGeneration: 1 }, 'keys are case-sensitive: "Status" is dropped');
  assert.equal(pass.childrenArray, false);
});

test('invalid JSON and a timeout are sync errors that leave the status alone', async (t) => {
  const server = await hookServer(t, {
    sync: async (_req, _reply, call) => {
      if (call === 1) return '{"status": {"phase": "Deployed"}';
      await new Promise((resolve) => setTimeout(resolve, 300));
      return { status: {}, children: [] };
    },
  });
  const mc = metacontroller(server, { timeoutMs: 100 });
  mc.apply(application());
  const bad = await mc.reconcile(NS, NAME);
  assert.match(bad.error ?? '', /^sync hook failed \(version=v1\): can't unmarshal webhookResponse/);
  const slow = await mc.reconcile(NS, NAME);
  assert.equal(slow.httpStatus, undefined);
  assert.match(slow.error ?? '', /http error: Post ".*\/sync": context deadline exceeded \(Client\.Timeout exceeded/);
  assert.equal(mc.events.length, 2);
  assert.equal(mc.get(NS, NAME)?.status, undefined);
  assert.deepEqual([bad.backoffMs, slow.backoffMs], [5, 10]);
});

test('a sync hook that answers finalized: true strips the finalizer, which the next pass adds back', async (t) => {
  const server = await hookServer(t, {
    sync: () => ({ status: {}, children: [], finalized: true }),
    finalize: () => ({ children: [], finalized: true }),
  });
  const mc = metacontroller(server);
  mc.apply(application());
  const first = await mc.reconcile(NS, NAME);
  assert.equal(first.finalized, true);
  assert.equal(mc.get(NS, NAME)?.metadata.finalizers, undefined);
  assert.deepEqual(mc.events.map((e) => [e.reason, e.source]), [['FinalizedBySyncHook', 'harness']]);
  const second = await mc.reconcile(NS, NAME);
  assert.equal(second.finalizerChanged, true);
  assert.equal(mc.finalizerWrites, 4, 'add, strip, add, strip: the finalizer flaps');
});

test('the request has the shape of a CompositeHookRequest and carries the configured headers', async (t) => {
  const server = await hookServer(t, {
    sync: () => ({ status: { phase: 'Deployed' }, children: [] }),
    finalize: () => ({ children: [], finalized: true }),
  });
  const mc = metacontroller(server, { headers: { Authorization: 'Bearer s3cret' }, timeoutMs: 1500, resyncPeriodSeconds: 60 });
  mc.apply(application());
  await mc.reconcileUntilStable(NS, NAME);
  const [first, second] = server.received;
  assert.ok(first && second);

  assert.deepEqual(Object.keys(first.body), ['controller', 'parent', 'children', 'related', 'finalizing']);
  assert.deepEqual(first.body.children, {});
  assert.deepEqual(first.body.related, {});
  assert.equal(first.body.finalizing, false);
  assert.equal(first.headers['content-type'], 'application/json');
  assert.equal(first.headers['authorization'], 'Bearer s3cret');
  assert.equal(first.headers['user-agent'], 'Go-http-client/1.1');

  const controller = first.body.controller as { apiVersion?: string; metadata: { name: string }; spec: Record<string, unknown> };
  assert.equal(controller.apiVersion, undefined, 'TypeMeta of the controller is empty');
  assert.equal(controller.metadata.name, 'wasmcloudapplication-controller');
  assert.deepEqual(controller.spec, {
    parentResource: { apiVersion: RESOURCE.apiVersion, resource: 'wasmcloudapplications' },
    hooks: {
      sync: { version: 'v1', webhook: { url: server.syncUrl, timeout: '1.5s' } },
      finalize: { version: 'v1', webhook: { url: server.finalizeUrl, timeout: '1.5s' } },
    },
    resyncPeriodSeconds: 60,
    generateSelector: true,
  });

  const parent = first.body.parent;
  assert.deepEqual(Object.keys(parent), ['apiVersion', 'kind', 'metadata', 'spec'], 'map keys sorted, no status yet');
  assert.equal(parent.metadata.namespace, NS);
  assert.match(parent.metadata.uid ?? '', /^[0-9a-f-]{36}$/);
  assert.equal(typeof parent.metadata.resourceVersion, 'string');
  assert.match(parent.metadata.creationTimestamp ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.deepEqual(parent.metadata.labels, { team: 'edge' });
  assert.ok(first.raw.includes('"a \\u003c b \\u0026 c"'), 'strings are HTML-escaped like encoding/json');

  assert.deepEqual(second.body.parent.status, { phase: 'Deployed', observedGeneration: 1 });
});

test('waitFor keeps reconciling on an interval until a change outside the cluster shows in the status', async (t) => {
  let deployed = false;
  const server = await hookServer(t, {
    sync: () => ({ status: { phase: deployed ? 'Deployed' : 'Pending' }, children: [], ...(deployed ? {} : { resyncAfterSeconds: 5 }) }),
  });
  const mc = metacontroller(server);
  mc.apply(application());
  const timer = setTimeout(() => { deployed = true; }, 60);
  t.after(() => clearTimeout(timer));
  const seen = await mc.waitFor(NS, NAME, (obj) => obj?.status?.['phase'] === 'Deployed', { timeoutMs: 2000, intervalMs: 20 });
  assert.ok(seen.passes >= 2);
  await assert.rejects(mc.waitFor(NS, NAME, () => false, { timeoutMs: 50, intervalMs: 10 }), /not reached within 50 ms: apps\/hello after \d+ passes/);
});

test('a refused connection is a SyncError without an HTTP status', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const mc = metacontroller({ syncUrl: `http://127.0.0.1:${port}/sync` });
  mc.apply(application());
  const pass = await mc.reconcile(NS, NAME);
  assert.equal(pass.httpStatus, undefined);
  assert.match(pass.error ?? '', /^sync hook failed \(version=v1\): http error: Post "http:\/\/127\.0\.0\.1:\d+\/sync": .*ECONNREFUSED/);
  assert.equal(mc.events[0]?.reason, 'SyncError');
  assert.equal(mc.calls[0]?.httpStatus, undefined);
});
