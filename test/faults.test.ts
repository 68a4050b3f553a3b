// Faults against real servers: NATS killed mid-stream, a slow or failing wadm, SIGTERM with
// hook calls in flight. The invariant everywhere: 200 with an honest status, never a wrong Ready,
// nothing lost, recovery without a restart.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { FakeWadm } from './support/fake-wadm.js';
import { FakeMetacontroller, condition, type K8sObject } from './support/metacontroller.js';
import { startNatsServer, type NatsServer } from './support/nats-server.js';
import { hello, hookRequest, type Resource } from './support/resources.js';
import { startService, type RunningService } from './support/service.js';
import { startScenario, type Scenario } from './support/scenario.js';
import { freePort } from './support/ports.js';
import { until } from './support/wait.js';
import { app } from './support/app.js';

let scenario: Scenario;
let nats: NatsServer;
let wadm: FakeWadm;
let running: RunningService;

before(async () => {
  scenario = await startScenario({ WADM_TIMEOUT_MS: '300' }, { deployGraceMs: 200 });
  ({ nats, wadm, running } = scenario);
});
after(() => scenario.stop());
beforeEach(() => scenario.reset());

function metacontroller(url?: string): FakeMetacontroller {
  return scenario.metacontroller(url === undefined ? {} : { url });
}

const ready = (obj: K8sObject | undefined) => obj !== undefined && condition(obj, 'Ready')?.status === 'True';
const numbered = (i: number): Resource => app().named(`app-${i}`).described(`app ${i}`).build();

describe('NATS killed and restarted during a stream of syncs', () => {
  it('loses no deployment, reports the outage honestly, and recovers without a service restart', async () => {
    const mc = metacontroller();
    const count = 12;
    for (let i = 0; i < count; i++) mc.apply(numbered(i) as never);
    const readiness: number[] = [];
    let outage = false;
    const reasonsDuringOutage = new Set<string>();
    const stream = (async () => {
      for (let round = 0; round < 400; round++) {
        const i = round % count;
        const result = await mc.reconcile('default', `app-${i}`);
        assert.equal(result.error, undefined, `hook call failed: ${result.error}`);
        const obj = mc.get('default', `app-${i}`)!;
        if (outage) reasonsDuringOutage.add(condition(obj, 'Ready')?.reason ?? 'none');
        readiness.push((await fetch(`${running.url}/readyz`)).status);
        if ([...Array(count).keys()].every((n) => ready(mc.get('default', `app-${n}`))) && round > count * 3) return;
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    await new Promise((r) => setTimeout(r, 100));
    outage = true;
    await nats.stop();
    await new Promise((r) => setTimeout(r, 800));
    await nats.restart();
    outage = false;
    await stream;
    for (let i = 0; i < count; i++) {
      const obj = mc.get('default', `app-${i}`)!;
      const status = obj.status as { version: string };
      assert.ok(ready(obj), `app-${i} not Ready: ${JSON.stringify(obj.status)}`);
      assert.equal(wadm.model('default', `app-${i}`)?.deployed, status.version, `app-${i} is deployed in wadm`);
    }
    assert.ok(readiness.includes(503), 'readiness dropped during the outage');
    assert.equal(readiness.at(-1), 200, 'and came back');
    assert.ok(reasonsDuringOutage.has('LatticeUnavailable'), `the outage was reported: ${[...reasonsDuringOutage].join(', ')}`);
  });
});

describe('a troubled wadm', () => {
  it('reports a wadm slower than WADM_TIMEOUT_MS as LatticeUnavailable (Timeout), never Ready, then converges', async () => {
    const mc = metacontroller();
    wadm.inject('versions', { kind: 'delay', ms: 500 }, { times: 1 });
    mc.apply(hello() as never);
    await mc.reconcile('default', 'hello-world');
    const obj = mc.get('default', 'hello-world')!;
    assert.equal(condition(obj, 'Ready')!.status, 'Unknown');
    assert.match(condition(obj, 'Ready')!.message ?? '', /Timeout/);
    await new Promise((r) => setTimeout(r, 300)); // the slow request drains from wadm's queue
    await mc.waitFor('default', 'hello-world', ready, { timeoutMs: 5000, intervalMs: 20 });
  });

  it('retries a passing Internal storage error and deploys without the user noticing', async () => {
    const mc = metacontroller();
    wadm.inject('put', { kind: 'storage-error' }, { times: 2 });
    mc.apply(hello() as never);
    await mc.reconcile('default', 'hello-world');
    assert.equal(wadm.count('put'), 3);
    assert.ok(wadm.model('default', 'hello-world')?.deployed);
  });

  it('reports a lasting Internal storage error as LatticeUnavailable (StorageError) and never as Ready', async () => {
    const mc = metacontroller();
    wadm.inject('deploy', { kind: 'storage-error' }, { times: 8 });
    mc.apply(hello() as never);
    await mc.reconcile('default', 'hello-world');
    const obj = mc.get('default', 'hello-world')!;
    assert.equal(condition(obj, 'Ready')!.reason, 'LatticeUnavailable');
    assert.match(condition(obj, 'Ready')!.message ?? '', /StorageError/);
    assert.equal(wadm.model('default', 'hello-world')!.deployed, null);
    await mc.waitFor('default', 'hello-world', ready, { timeoutMs: 5000, intervalMs: 20 });
  });

  it('is not fooled by a reply lost after wadm acted: the next sync sees the version and goes on', async () => {
    const mc = metacontroller();
    wadm.inject('put', { kind: 'no-reply', apply: true });
    mc.apply(hello() as never);
    await mc.reconcile('default', 'hello-world');
    assert.equal(condition(mc.get('default', 'hello-world')!, 'Ready')!.status, 'Unknown');
    await mc.waitFor('default', 'hello-world', ready, { timeoutMs: 5000, intervalMs: 20 });
    assert.equal(wadm.model('default', 'hello-world')!.versions.length, 1, 'no second version for the same spec');
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
    wadm.inject('deploy', { kind: 'no-reply' });
    mc.apply(hello() as never);
    await mc.reconcile('default', 'hello-world');
    assert.equal(condition(mc.get('default', 'hello-world'), 'Ready')?.reason, 'LatticeUnavailable');
    await mc.waitFor('default', 'hello-world', ready, { timeoutMs: 10_000, intervalMs: 20 });
    wadm.inject('del', { kind: 'no-reply' });
    const finalizing = mc.deleteAndFinalize('default', 'hello-world', { maxPasses: 50 });
    await finalizing;

    const since = running.logs.slice(before.logs);
    const warned = since.filter((l) => l['level'] === 40 && /^could not (deploy|delete)/.test(String(l['msg'])));
    assert.deepEqual(warned.map((l) => [l['operation'], String(l['reason']).split(':')[0]]), [['deploy', 'Timeout'], ['delete', 'Timeout']]);
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
    const child = spawn(process.execPath, ['--import', 'tsx', resolve(import.meta.dirname, '../src/main.ts')], {
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', NATS_URL: nats.url, SHUTDOWN_DELAY_MS: '600', LATTICE_POLICY_FILE: join(dir, 'policy.yaml') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    t.after(() => child.kill('SIGKILL'));
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    const url = `http://127.0.0.1:${port}`;
    await until(async () => (await fetch(`${url}/readyz`).catch(() => undefined))?.status === 200);

    wadm.inject('versions', { kind: 'delay', ms: 400 });
    const inFlight = fetch(`${url}/sync`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(hookRequest(hello())) });
    await new Promise((r) => setTimeout(r, 100));
    const signalled = Date.now();
    child.kill('SIGTERM');
    await until(async () => (await fetch(`${url}/readyz`)).status === 503);
    assert.ok(Date.now() - signalled < 400, 'readiness dropped while the call was still running');
    const answer = await inFlight;
    assert.equal(answer.status, 200);
    assert.equal(((await answer.json()) as { status: { phase: string } }).status.phase, 'Reconciling');
    assert.equal(await exited, 0);
    assert.ok(Date.now() - signalled < 5000, 'well within a 30 s grace period');
  });
});
