// Faults against real servers (the real wadm behind the fault-injecting relay): NATS killed
// mid-stream, a slow or failing wadm, SIGTERM with hook calls in flight. The invariant everywhere: 200 with an honest status, never a wrong Ready,
// nothing lost, recovery without a restart.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { FakeMetacontroller, condition, type K8sObject } from '../support/metacontroller.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { wasmApp, hookRequest, type Resource } from '../support/resources.js';
import { startService, type RunningService } from '../support/service.js';
import { startScenario, WADM_WAIT, type Scenario } from '../support/scenario.js';
import { freePort } from '../support/ports.js';
import { until } from '../support/wait.js';
import type { WadmRelay } from '../support/wadm-relay.js';

let scenario: Scenario;
let nats: NatsServer;
let wadm: WadmRelay;
let running: RunningService;

before(async () => {
  // Short enough that a lost request or reply costs little, long enough for a loaded real wadm.
  // A short grace (wiring/readiness.ts): alone, a replica cut off from NATS answers the outage after it.
  scenario = await startScenario({ WADM_TIMEOUT_MS: '1500', NATS_OUTAGE_GRACE: '1s' });
  ({ nats, wadm, running } = scenario);
});
after(() => scenario.stop());
beforeEach(() => scenario.reset());

function metacontroller(url?: string): FakeMetacontroller {
  return scenario.metacontroller(url === undefined ? {} : { url });
}

const ready = (obj: K8sObject | undefined) => obj !== undefined && condition(obj, 'Ready')?.status === 'True';
const numbered = (i: number): Resource => wasmApp().named(`app-${i}`).described(`app ${i}`).build();

describe('a troubled wadm', () => {
  it('reports a wadm slower than WADM_TIMEOUT_MS as LatticeUnavailable (Timeout), never Ready, then converges', async () => {
    const mc = metacontroller();
    const slow = wadm.hold('versions');
    mc.apply(wasmApp().build() as never);
    await mc.reconcile('default', 'hello-world');
    const obj = mc.get('default', 'hello-world')!;
    assert.equal(condition(obj, 'Ready')!.status, 'Unknown');
    assert.match(condition(obj, 'Ready')!.message ?? '', /Timeout/);
    slow.release();
    await mc.waitFor('default', 'hello-world', ready, WADM_WAIT);
  });

  it('retries a passing Internal storage error and deploys without the user noticing', async () => {
    const mc = metacontroller();
    wadm.inject('put', { kind: 'storage-error' }, { times: 2 });
    mc.apply(wasmApp().build() as never);
    await mc.reconcile('default', 'hello-world');
    assert.equal(wadm.count('put'), 3);
    assert.ok((await wadm.model('default', 'hello-world'))?.deployed);
  });

  it('reports a lasting Internal storage error as LatticeUnavailable (StorageError) and never as Ready', async () => {
    const mc = metacontroller();
    wadm.inject('deploy', { kind: 'storage-error' }, { times: 8 });
    mc.apply(wasmApp().build() as never);
    await mc.reconcile('default', 'hello-world');
    const obj = mc.get('default', 'hello-world')!;
    assert.equal(condition(obj, 'Ready')!.reason, 'LatticeUnavailable');
    assert.match(condition(obj, 'Ready')!.message ?? '', /StorageError/);
    assert.equal((await wadm.model('default', 'hello-world'))!.deployed, null);
    await mc.waitFor('default', 'hello-world', ready, WADM_WAIT);
  });

  it('is not fooled by a reply lost after wadm acted: the next sync sees the version and goes on', async () => {
    const mc = metacontroller();
    wadm.inject('put', { kind: 'lost-reply' });
    mc.apply(wasmApp().build() as never);
    await mc.reconcile('default', 'hello-world');
    assert.equal(condition(mc.get('default', 'hello-world')!, 'Ready')!.status, 'Unknown');
    await mc.waitFor('default', 'hello-world', ready, WADM_WAIT);
    assert.equal((await wadm.model('default', 'hello-world'))!.versions.length, 1, 'no second version for the same spec');
  });
});

describe('a shutdown during a NATS outage', () => {
  it('leaves no connection reconnecting behind', async (t) => {
    const own = await startNatsServer({ jetstream: false, extraArgs: ['-DV'] });
    t.after(() => own.dispose());
    const service = await startService({ after: () => undefined }, { NATS_URL: own.url });
    await service.connected();
    await own.stop();
    await service.service.shutdown();
    await own.restart();
    await new Promise((resolve) => setTimeout(resolve, 2500)); // longer than the reconnect wait
    const sinceRestart = own.output().split('--- restart ---').pop() ?? '';
    assert.doesNotMatch(sinceRestart, /"name":"wasmcloud-metacontroller"/, 'the shut-down service connected again');
  });
});

describe('writes wadm never confirmed (wadm stops answering mid-call)', () => {
  const writes = async (operation: string) =>
    (await running.service.metrics.wadmWrites.get()).values.find((v) => v.labels['operation'] === operation)?.value ?? 0;
  const infoLines = (text: RegExp) => running.logs.filter((l) => l['level'] === 30 && text.test(String(l['msg'])));

  it('a deploy and a delete that got no reply are logged once at warn, never as done, and not counted', async () => {
    const mc = metacontroller();
    const before = { deploy: await writes('deploy'), delete: await writes('delete'), logs: running.logs.length };
    wadm.inject('deploy', { kind: 'lost-request' });
    mc.apply(wasmApp().build() as never);
    await mc.reconcile('default', 'hello-world');
    assert.equal(condition(mc.get('default', 'hello-world'), 'Ready')?.reason, 'LatticeUnavailable');
    await mc.waitFor('default', 'hello-world', ready, WADM_WAIT);
    wadm.inject('del', { kind: 'lost-request' });
    const finalizing = mc.deleteAndFinalize('default', 'hello-world', { maxPasses: 50 });
    await finalizing;

    const since = running.logs.slice(before.logs);
    const warned = since.filter((l) => l['level'] === 40 && /^could not (deploy|delete)/.test(String(l['msg'])));
    assert.deepEqual(
      warned.map((l) => [l['operation'], String(l['reason']).split(':')[0]]),
      [
        ['deploy', 'Timeout'],
        ['delete', 'Timeout'],
      ],
    );
    // Exactly one confirmed deploy and one confirmed delete, each logged and counted once.
    assert.equal(infoLines(/^deployed version/).filter((l) => since.includes(l)).length, 1);
    assert.equal(infoLines(/^deleted the application/).filter((l) => since.includes(l)).length, 1);
    assert.equal(await writes('deploy'), before.deploy + 1);
    assert.equal(await writes('delete'), before.delete + 1);
  });
});

describe('SIGTERM with hook calls in flight', () => {
  it('drops readiness first, finishes the calls, then exits 0 within the grace period', async (t) => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'policy-'));
    writeFileSync(join(dir, 'policy.yaml'), 'rules:\n  - namespaces: ["*"]\n    lattices: ["*"]\n');
    const child = spawn(process.execPath, ['--import', 'tsx', resolve(import.meta.dirname, '../../src/main.ts')], {
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        NATS_URL: nats.url,
        SHUTDOWN_DELAY_MS: '600',
        LATTICE_POLICY_FILE: join(dir, 'policy.yaml'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    t.after(() => child.kill('SIGKILL'));
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    const url = `http://127.0.0.1:${port}`;
    await until(async () => (await fetch(`${url}/readyz`).catch(() => undefined))?.status === 200);

    const slow = wadm.hold('versions');
    let answered = false;
    const inFlight = fetch(`${url}/sync`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(hookRequest(wasmApp().build())),
    });
    inFlight.then(
      () => (answered = true),
      () => (answered = true),
    );
    await slow.arrived;
    const signalled = Date.now();
    child.kill('SIGTERM');
    await until(async () => (await fetch(`${url}/readyz`)).status === 503);
    assert.equal(answered, false, 'readiness dropped while the call was still running');
    slow.release();
    const answer = await inFlight;
    assert.equal(answer.status, 200);
    assert.equal(((await answer.json()) as { status: { phase: string } }).status.phase, 'Reconciling');
    assert.equal(await exited, 0);
    assert.ok(Date.now() - signalled < 5000, 'well within a 30 s grace period');
  });
});

// Last: wadm and the simulated host do not reliably come back whole from a NATS restart.
describe('NATS killed and restarted during a stream of syncs', () => {
  it('loses no deployment, reports the outage honestly, and recovers without a service restart', async (t) => {
    const mc = metacontroller();
    const count = 12;
    for (let i = 0; i < count; i++) mc.apply(numbered(i) as never);
    const readiness: number[] = [];
    let outage = false;
    let restarted = false;
    let synced = 0;
    const reasonsDuringOutage = new Set<string>();
    const allReady = () => [...Array(count).keys()].every((n) => ready(mc.get('default', `app-${n}`)));
    const stream = (async () => {
      // Bounded only so that a broken service cannot hang the run: it ends once all are Ready after the restart.
      for (let round = 0; round < 20_000; round++) {
        const i = round % count;
        const result = await mc.reconcile('default', `app-${i}`);
        // No call fails, the outage included: during the grace the calls are refused 429 with
        // Retry-After (left to a peer: there is none here), which Metacontroller does not count as a failure.
        assert.equal(result.error, undefined, `hook call failed: ${result.error}`);
        if (result.httpStatus === 429)
          assert.ok(outage && result.retryAfterSeconds === 1, 'refused only during the outage, with Retry-After: 1');
        const obj = mc.get('default', `app-${i}`)!;
        if (outage) reasonsDuringOutage.add(condition(obj, 'Ready')?.reason ?? 'none');
        synced = Math.max(synced, i + 1);
        if (restarted && allReady()) return;
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    // A failed call ends the stream: every wait below then fails at once, with that failure.
    let streamFailure: unknown;
    stream.catch((err: unknown) => (streamFailure = err));
    const unlessFailed =
      <T>(check: () => T) =>
      () => {
        if (streamFailure !== undefined) throw streamFailure;
        return check();
      };
    // Its own loop: a hook call in flight when NATS goes can outlast the grace, so samples taken
    // between calls could miss the 503 altogether.
    let sampling = true;
    t.after(() => (sampling = false));
    const sampler = (async () => {
      while (sampling) {
        readiness.push((await fetch(`${running.url}/readyz`)).status);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await until(
      unlessFailed(() => synced === count),
      { what: 'every application synced once' },
    );
    outage = true;
    await nats.stop();
    // NATS stays down until the service has said so: not ready during the grace, then ready again
    // (no peer can answer instead) and LatticeUnavailable in the statuses.
    await until(
      unlessFailed(() => readiness.includes(503) && readiness.at(-1) === 200 && reasonsDuringOutage.has('LatticeUnavailable')),
      {
        ...WADM_WAIT,
        what: () => `the outage reported: ${[...reasonsDuringOutage].join(', ')}; readiness ${[...new Set(readiness)].join(', ')}`,
      },
    );
    await scenario.restartNats();
    outage = false;
    restarted = true;
    await stream;
    await until(() => readiness.at(-1) === 200, { what: 'readiness back' });
    sampling = false;
    await sampler;
    for (let i = 0; i < count; i++) {
      const status = mc.get('default', `app-${i}`)!.status as { version: string };
      assert.equal((await wadm.model('default', `app-${i}`))?.deployed, status.version, `app-${i} is deployed in wadm`);
    }
    assert.ok(allReady(), 'every application is Ready again');
  });
});
