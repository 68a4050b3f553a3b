// A settled application's resync must cost no NATS request beyond one shared liveness probe per
// lattice and window, and a cold start must not stampede wadm. Counted on an injected clock, never timed.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { queryObjects } from 'node:v8';
import { connect, type NatsConnection } from 'nats';
import { Limiter } from '../../src/lattice/limiter.js';
import { WadmClient } from '../../src/lattice/wadm-client.js';
import { WadmUnavailableError } from '../../src/lattice/errors.js';
import { withinDeadline } from '../../src/plumbing/deadline.js';
import { FakeMetacontroller, condition } from '../support/metacontroller.js';
import type { NatsServer } from '../support/nats-server.js';
import { wasmApp } from '../support/resources.js';
import type { RunningService } from '../support/service.js';
import { startScenario, WADM_WAIT, type Scenario } from '../support/scenario.js';
import { testClock } from '../support/clock.js';
import type { WadmRelay } from '../support/wadm-relay.js';
import { until } from '../support/wait.js';

let scenario: Scenario;
let nats: NatsServer;
let wadm: WadmRelay;
let running: RunningService;
let nc: NatsConnection;
/** The service's clock: it moves only when a test moves it. */
const clock = testClock();
before(async () => {
  scenario = await startScenario({ MODEL_CACHE_TTL_SECONDS: '60' }, { now: clock.now });
  ({ nats, wadm, running } = scenario);
  nc = await connect({ servers: nats.url });
});
after(async () => {
  await nc.close();
  await scenario.stop();
});
beforeEach(() => scenario.reset());

function metacontroller(url?: string): FakeMetacontroller {
  return scenario.metacontroller(url === undefined ? {} : { url });
}

async function settledApp(mc: FakeMetacontroller): Promise<void> {
  mc.apply(wasmApp().build() as never);
  await mc.waitFor('default', 'hello-world', (obj) => condition(obj!, 'Ready')?.status === 'True', WADM_WAIT);
  await mc.reconcileUntilStable('default', 'hello-world', { maxPasses: 3 });
}

describe('the settled fast path', () => {
  it('answers resyncs of a settled application with zero NATS requests', async () => {
    const mc = metacontroller();
    await settledApp(mc);
    const before = wadm.count();
    for (let i = 0; i < 20; i++) await mc.reconcile('default', 'hello-world');
    assert.equal(wadm.count(), before, 'no request reached wadm');
    assert.equal(condition(mc.get('default', 'hello-world')!, 'Ready')!.status, 'True');
  });

  it('answers those resyncs from memory, and stops as soon as wadm reports a change', async () => {
    const mc = metacontroller();
    await settledApp(mc);
    const fromMemory = () =>
      running.service.metrics.answers.get().then((m) => m.values.find((v) => v.labels['source'] === 'memory')?.value ?? 0);
    const hits = await fromMemory();
    for (let i = 0; i < 5; i++) await mc.reconcile('default', 'hello-world');
    assert.equal(await fromMemory(), hits + 5, 'every settled resync came from memory (hook_answers_total)');
    await scenario.sim.stopHost(scenario.sim.hosts[0]!.id); // wadm reports the application failed
    await mc.waitFor('default', 'hello-world', (obj) => condition(obj!, 'Ready')?.status === 'False', WADM_WAIT);
    assert.match(condition(mc.get('default', 'hello-world')!, 'Ready')!.message ?? '', /eligible hosts|instances/);
  });

  it('asks wadm with one probe per lattice once the liveness window has passed, shared by every application', async () => {
    const mc = metacontroller();
    await settledApp(mc);
    mc.apply(wasmApp().inNamespace('other').build() as never);
    await mc.waitFor('other', 'hello-world', (obj) => condition(obj!, 'Stalled')?.reason === 'OwnershipConflict', {
      timeoutMs: 5000,
      intervalMs: 20,
    });
    clock.advance(5_000); // LIVENESS_MS
    const before = wadm.requests.length;
    for (let i = 0; i < 5; i++) await mc.reconcile('default', 'hello-world');
    assert.deepEqual(
      wadm.requests.slice(before).map((r) => r.op),
      ['history'],
      'one probe, then memory again',
    );
    assert.equal(condition(mc.get('default', 'hello-world')!, 'Ready')!.status, 'True');
  });

  it('asks wadm again once the model TTL has passed, to notice changes made outside', async () => {
    const mc = metacontroller();
    await settledApp(mc);
    clock.advance(60_000); // MODEL_CACHE_TTL_SECONDS=60
    const before = wadm.requests.length;
    await mc.reconcile('default', 'hello-world');
    // Its versions: a change made outside shows there (another newest or deployed version, then
    // read); the newest is still the version this replica put, so no get.
    assert.deepEqual(
      wadm.requests.slice(before).map((r) => r.op),
      ['versions'],
    );
    await mc.reconcile('default', 'hello-world');
    assert.equal(wadm.requests.length, before + 1, 'and then trusts it again');
  });
});

describe('a busy wadm', () => {
  /** Another lattice, whose writes the quiet lattice's probe waits behind in wadm's one queue. */
  const CROWDED = 'crowded';
  const writer = () => wasmApp().named('writer').inLattice(CROWDED);
  const quietRequests = () => wadm.requests.filter((r) => r.lattice === 'default').map((r) => r.op);

  /** A settled application, and another lattice's application whose edit puts. */
  async function twoLattices(): Promise<FakeMetacontroller> {
    const mc = metacontroller();
    await settledApp(mc);
    mc.apply(writer().build() as never);
    await mc.reconcile('default', 'writer');
    mc.apply(writer().with({ description: 'edit' }).build() as never);
    clock.advance(5_000); // LIVENESS_MS: the settled application's next call probes its lattice
    return mc;
  }

  /** The other lattice's edit, its put held at the relay: wadm has it in its queue, unanswered. */
  async function putHeld(mc: FakeMetacontroller) {
    const put = wadm.hold('put', { lattice: CROWDED });
    const writing = mc.reconcile('default', 'writer');
    await put.arrived;
    return { release: () => put.release(), writing };
  }

  async function probed(mc: FakeMetacontroller, whileProbing: () => void) {
    const probe = wadm.hold('history', { lattice: 'default' });
    const before = quietRequests().length;
    const quiet = mc.reconcile('default', 'hello-world');
    await probe.arrived;
    whileProbing();
    const result = await quiet;
    probe.release();
    return { result, requests: quietRequests().slice(before) };
  }

  it("keeps a quiet lattice's settled application Ready when its probe waits behind another lattice's write that wadm answers", async () => {
    const mc = await twoLattices();
    const put = await putHeld(mc);
    // wadm answers the put while the probe, sent after it, still waits: busy, not gone.
    const { result, requests } = await probed(mc, () => put.release());
    assert.deepEqual(requests, ['history'], 'one probe');
    assert.equal(result.statusChanged, false, 'no status write');
    assert.equal(condition(mc.get('default', 'hello-world')!, 'Ready')!.status, 'True');
    await put.writing;
    const settled = quietRequests().length;
    for (let i = 0; i < 3; i++) await mc.reconcile('default', 'hello-world');
    assert.equal(quietRequests().length, settled, 'taken as a sign of life: no probe joins the queue within the window');
    assert.equal(condition(mc.get('default', 'hello-world')!, 'Ready')!.status, 'True');
    await wadm.clear(CROWDED);
  });

  it("keeps it Ready when wadm answers, while its probe waits, another lattice's write that had already timed out", async () => {
    const mc = await twoLattices();
    const put = await putHeld(mc);
    // The writer's call gives up on its put: no request of ours that wadm has is still awaited.
    await put.writing;
    const writer = condition(mc.get('default', 'writer')!, 'Ready')!;
    assert.deepEqual([writer.status, writer.reason], ['Unknown', 'LatticeUnavailable']);
    assert.match(writer.message ?? '', /did not answer .*model\.put/, 'the put timed out');
    // wadm works through its queue and answers the put late, while the probe waits behind it.
    const { result, requests } = await probed(mc, () => put.release());
    assert.deepEqual(requests, ['history'], 'one probe');
    assert.equal(result.statusChanged, false, 'no status write');
    assert.equal(condition(mc.get('default', 'hello-world')!, 'Ready')!.status, 'True');
    await wadm.clear(CROWDED);
  });

  it('takes a reply that came after its request timed out as a sign of life, and counts it', async () => {
    const mc = metacontroller();
    await settledApp(mc);
    const editor = () => wasmApp().named('editor');
    mc.apply(editor().build() as never);
    await mc.waitFor('default', 'editor', (obj) => condition(obj!, 'Ready')?.status === 'True', WADM_WAIT);
    const late = () =>
      running.service.metrics.wadmLateReplies.get().then((m) => m.values.find((v) => v.labels['operation'] === 'versions')?.value ?? 0);
    const before = await late();
    clock.advance(5_000); // LIVENESS_MS: nothing wadm answered in time is recent enough
    // An edit whose read of the versions wadm answers only after the call gave up on it.
    mc.apply(editor().with({ description: 'edit' }).build() as never);
    const versions = wadm.hold('versions', { lattice: 'default' });
    await mc.reconcile('default', 'editor');
    assert.match(condition(mc.get('default', 'editor')!, 'Ready')!.message ?? '', /model\.versions/, 'the read timed out');
    versions.release();
    await until(async () => (await late()) === before + 1, { what: 'the late reply counted' });
    const asked = quietRequests().length;
    await mc.reconcile('default', 'hello-world');
    assert.deepEqual(quietRequests().slice(asked), [], 'no probe: wadm answered within the window, late');
    assert.equal(condition(mc.get('default', 'hello-world')!, 'Ready')!.status, 'True');
  });

  it('turns it Unknown when its probe times out and wadm answered nothing meanwhile', async () => {
    const mc = await twoLattices();
    const { result, requests } = await probed(mc, () => undefined);
    assert.deepEqual(requests, ['history'], 'one probe');
    assert.equal(result.statusChanged, true, 'the status says so');
    const ready = condition(mc.get('default', 'hello-world')!, 'Ready')!;
    assert.deepEqual([ready.status, ready.reason], ['Unknown', 'LatticeUnavailable']);
    await wadm.clear(CROWDED);
  });

  it('turns it Unknown when wadm also leaves the request the probe waited behind unanswered (a stalled wadm)', async () => {
    const mc = await twoLattices();
    const put = await putHeld(mc);
    // The put is still being worked on when the probe times out; it is waited for, and times out too.
    const { result } = await probed(mc, () => undefined);
    assert.equal(result.statusChanged, true, 'the status says so');
    assert.equal(condition(mc.get('default', 'hello-world')!, 'Ready')!.status, 'Unknown');
    put.release();
    await put.writing;
    await wadm.clear(CROWDED);
  });
});

describe('an edit', () => {
  /** One pass, its model's versions held at the relay until a get arrives beside them (sent at once): its requests. */
  async function withVersionsHeld(mc: FakeMetacontroller): Promise<string[]> {
    const versions = wadm.hold('versions');
    const before = wadm.requests.length;
    const pass = mc.reconcile('default', 'hello-world');
    await versions.arrived;
    const ops = () => wadm.requests.slice(before).map((r) => r.op);
    await until(() => ops().includes('get'), { what: 'a get sent while the versions are unanswered' });
    versions.release();
    await pass;
    return ops();
  }

  it('reads the model afresh but no version this replica put or read: the oldest stays first, a version named by its content hash holds that content', async () => {
    const mc = metacontroller();
    await settledApp(mc);
    const edit = async (n: number) => {
      mc.apply(
        wasmApp()
          .with({ description: `edit ${n}` })
          .build() as never,
      );
      const before = wadm.requests.length;
      await mc.reconcile('default', 'hello-world');
      return wadm.requests.slice(before).map((r) => r.op);
    };
    // The second version: the model's versions, then the put and the deploy. Its newest version is
    // the one this replica put, named by its content's hash: what it holds is known without a get.
    assert.deepEqual(await edit(1), ['versions', 'put', 'deploy']);
    // The third: the oldest of two says whose the model is; this replica put it, and the newest too.
    assert.deepEqual(await edit(2), ['versions', 'put', 'deploy']);
    const desired = (mc.get('default', 'hello-world')!.status as { version: string }).version;
    assert.equal((await wadm.model('default', 'hello-world'))?.deployed, desired, 'wadm deploys the newest desired version');
  });

  it('sends no liveness probe before its read once the window has passed: the read itself asks wadm', async () => {
    const mc = metacontroller();
    await settledApp(mc);
    clock.advance(5_000); // LIVENESS_MS
    mc.apply(wasmApp().with({ description: 'edit' }).build() as never);
    const before = wadm.requests.length;
    await mc.reconcile('default', 'hello-world');
    assert.deepEqual(
      wadm.requests.slice(before).map((r) => r.op),
      ['versions', 'put', 'deploy'],
      'three requests in a row, not four',
    );
  });

  it('reads the newest version with the versions, at once, in a replica that does not know it (a restart), and the oldest once', async () => {
    const mc = metacontroller();
    await settledApp(mc);
    mc.apply(wasmApp().with({ description: 'edit 1' }).build() as never);
    await mc.reconcile('default', 'hello-world');
    running.service.knowledge.reset(); // what a fresh process knows of wadm: nothing
    mc.apply(wasmApp().with({ description: 'edit 2' }).build() as never);
    const ops = await withVersionsHeld(mc);
    assert.deepEqual(ops.slice(0, 2).sort(), ['get', 'versions'], 'the versions and the newest version, at once');
    assert.deepEqual(
      ops.slice(2),
      ['get', 'put', 'deploy'],
      'then the oldest version, the put and the deploy: no more requests than before',
    );
  });

  it('after a lost deploy, knows the version still deployed from what it learnt: no read of it', async () => {
    const mc = metacontroller();
    await settledApp(mc);
    mc.apply(wasmApp().with({ description: 'edit 1' }).build() as never);
    await mc.reconcile('default', 'hello-world');
    mc.apply(wasmApp().with({ description: 'edit 2' }).build() as never);
    wadm.inject('deploy', { kind: 'lost-request' });
    await mc.reconcile('default', 'hello-world'); // put; its deploy never reaches wadm
    const before = wadm.requests.length;
    await mc.reconcile('default', 'hello-world');
    // The call that put the new version failed, but what it learnt of the version it put stays
    // true while the version exists (named by its content), as does what it learnt before of the
    // version still deployed: the versions, then the deploy. (A slow wadm that lets each call
    // finish two requests in a row still converges: the get would be a third.)
    assert.deepEqual(
      wadm.requests.slice(before).map((r) => r.op),
      ['versions', 'deploy'],
    );
    const desired = (mc.get('default', 'hello-world')!.status as { version: string }).version;
    assert.equal((await wadm.model('default', 'hello-world'))?.deployed, desired, 'wadm deploys the newest desired version');
  });
});

describe('a cold start', () => {
  it('sends identical reads in flight once (singleflight)', async () => {
    let shared = 0;
    const client = new WadmClient({ connection: () => nc, apiPrefix: 'wadm.api', timeoutMs: 1000, onShared: () => shared++ });
    const held = wadm.hold('versions');
    const asked = Promise.all(Array.from({ length: 5 }, () => client.versions('default', 'same')));
    await held.arrived;
    held.release();
    assert.deepEqual(await asked, [null, null, null, null, null]);
    assert.equal(wadm.count('versions'), 1);
    assert.equal(shared, 4);
  });

  it('keeps no limiter for a lattice once its requests are done (each first put asks about its own shadowed lattice)', async () => {
    const client = new WadmClient({ connection: () => nc, apiPrefix: 'wadm.api', timeoutMs: 1000 });
    const limiters = () => queryObjects(Limiter, { format: 'count' }) as number;
    const before = limiters();
    await Promise.all(Array.from({ length: 20 }, (_, i) => client.versions(`default-app-${i}`, 'app')));
    assert.equal(limiters(), before, 'no Limiter left behind by 20 lattices asked once');
  });

  it('keeps at most the configured number of wadm requests in flight per lattice', async () => {
    const limiter = new Limiter(3);
    let active = 0;
    let peak = 0;
    const task = async () => {
      peak = Math.max(peak, ++active);
      await new Promise((resolve) => setTimeout(resolve, 5));
      active--;
    };
    await Promise.all(Array.from({ length: 20 }, () => limiter.run(task, 1000, 'x')));
    assert.equal(peak, 3);
  });

  it('gives up waiting for a slot with a Timeout, which the hook reports as LatticeUnavailable', async () => {
    const limiter = new Limiter(1);
    const slow = limiter.run(() => new Promise((resolve) => setTimeout(resolve, 200)), 1000, 'first');
    await assert.rejects(
      limiter.run(async () => 'never', 20, 'wadm.api.default.model.versions.x'),
      (err) => err instanceof WadmUnavailableError && err.reason === 'Timeout',
    );
    await slow;
    // The slot came back and the waiter that gave up left no trace: a new request runs at once.
    assert.equal(await limiter.run(async () => 'ran', 1, 'next'), 'ran');
  });

  it('sends no request that wadm has lately taken longer to answer than the hook call has left', async () => {
    const client = new WadmClient({ connection: () => nc, apiPrefix: 'wadm.api', timeoutMs: 3000 });
    wadm.slow(400);
    assert.equal(await client.versions('default', 'unknown'), null, 'answered in about 400 ms: learnt');
    const sent = wadm.count();
    await assert.rejects(
      withinDeadline(performance.now() + 200, () => client.versions('default', 'unknown')),
      (err) => err instanceof WadmUnavailableError && err.reason === 'Timeout' && /not sent/.test(err.message),
    );
    assert.equal(wadm.count(), sent, 'nothing reached wadm');
    // With the time it needs, it is sent.
    assert.equal(await withinDeadline(performance.now() + 2000, () => client.versions('default', 'unknown')), null);
  });
});
