// The whole service over HTTP, driven by the Metacontroller emulator, against a real nats-server,
// the real wadm behind the fault-injecting relay, and a simulated host. What wadm itself does
// (versions on edit and revert, suspend, delete, no hosts) is proven in e2e-wadm.test.ts.
import { before, after, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeMetacontroller, condition, type K8sObject } from '../support/metacontroller.js';
import type { NatsServer } from '../support/nats-server.js';
import { wasmApp, type Resource } from '../support/resources.js';
import type { RunningService } from '../support/service.js';
import { startScenario, WADM_WAIT, type Scenario } from '../support/scenario.js';
import { until } from '../support/wait.js';
import type { WadmRelay } from '../support/wadm-relay.js';

let scenario: Scenario;
let nats: NatsServer;
let wadm: WadmRelay;
let running: RunningService;

before(async () => {
  // A short NATS_OUTAGE_GRACE: alone, the replica answers a NATS outage after it (wiring/readiness.ts).
  scenario = await startScenario({ NATS_OUTAGE_GRACE: '1s' });
  ({ nats, wadm, running } = scenario);
});
after(() => scenario.stop());
beforeEach(() => scenario.reset());

function metacontroller(url?: string): FakeMetacontroller {
  return scenario.metacontroller(url === undefined ? {} : { url });
}

const isReady = (obj: K8sObject | undefined) => condition(obj!, 'Ready')?.status === 'True';
const phaseOf = (obj: K8sObject | undefined) => (obj?.status as { phase?: string } | undefined)?.phase;

async function deploy(mc: FakeMetacontroller, resource: Resource) {
  mc.apply(resource as never);
  const { namespace, name } = resource.metadata;
  await mc.waitFor(namespace, name, isReady, WADM_WAIT);
  return mc.reconcileUntilStable(namespace, name, { maxPasses: 5 });
}

describe('a WasmCloudApplication through Metacontroller, NATS and wadm', () => {
  it('converges to Ready, then stops changing status (no hot loop)', async () => {
    const mc = metacontroller();
    const settled = await deploy(mc, wasmApp().build());
    assert.equal(settled.stable, true);
    assert.ok(settled.passes <= 2, `settled after ${settled.passes} extra passes`);
    const obj = settled.object!;
    const status = obj.status as Record<string, unknown>;
    assert.equal(status['phase'], 'Deployed');
    assert.equal(status['deployedVersion'], status['version']);
    assert.equal(status['observedGeneration'], obj.metadata.generation);
    const model = (await wadm.model('default', 'hello-world'))!;
    assert.deepEqual(model.versions, [status['version']]);
    assert.equal(model.deployed, status['version']);
    const writes = mc.statusWrites;
    await mc.reconcile('default', 'hello-world');
    await mc.reconcile('default', 'hello-world');
    assert.equal(mc.statusWrites, writes, 'a settled application must not rewrite its status');
  });

  it("settles with Metacontroller's ETag cache on: resyncs are answered 304 and change nothing", async () => {
    const mc = scenario.metacontroller({ etag: true });
    await deploy(mc, wasmApp().build());
    const writes = mc.statusWrites;
    const hits = mc.etagHits;
    for (let i = 0; i < 3; i++) await mc.reconcile('default', 'hello-world');
    assert.equal(mc.etagHits, hits + 3);
    assert.equal(mc.statusWrites, writes);
    assert.equal(condition(mc.get('default', 'hello-world')!, 'Ready')!.status, 'True');
  });

  it('puts with Content-Type application/json and never puts an unchanged spec again', async () => {
    const mc = metacontroller();
    await deploy(mc, wasmApp().build());
    const puts = wadm.requests.filter((r) => r.op === 'put');
    assert.equal(puts.length, 1);
    assert.equal(puts[0]!.contentType, 'application/json');
    for (let i = 0; i < 3; i++) await mc.reconcile('default', 'hello-world');
    assert.equal(wadm.count('put'), 1);
  });

  it('puts and deploys a new version on a spec edit, and redeploys the earlier one on revert without a put', async () => {
    const mc = metacontroller();
    const first = await deploy(mc, wasmApp().build());
    const v1 = (first.object!.status as { version: string }).version;
    const edited = await deploy(mc, wasmApp().described('edited').build());
    const v2 = (edited.object!.status as { version: string }).version;
    assert.notEqual(v1, v2);
    assert.deepEqual((await wadm.model('default', 'hello-world'))!.versions, [v1, v2]);
    assert.equal((await wadm.model('default', 'hello-world'))!.deployed, v2);

    const putsBefore = wadm.count('put');
    const reverted = await deploy(mc, wasmApp().build());
    assert.equal((reverted.object!.status as { version: string }).version, v1);
    assert.equal((await wadm.model('default', 'hello-world'))!.deployed, v1);
    assert.equal(wadm.count('put'), putsBefore, 'revert must not put');
  });

  it('leaves the application running on delete with deletionPolicy Orphan', async () => {
    const mc = metacontroller();
    await deploy(mc, wasmApp().with({ deletionPolicy: 'Orphan' }).build());
    const result = await mc.deleteAndFinalize('default', 'hello-world', { maxPasses: 5 });
    assert.equal(result.removed, true);
    assert.ok((await wadm.model('default', 'hello-world'))?.deployed);
    assert.equal(wadm.count('del'), 0);
  });

  it('reports a spec error as Stalled InvalidSpec without sending anything to wadm', async () => {
    const mc = metacontroller();
    mc.apply(wasmApp('invalid-dangling-link.yaml').build() as never);
    const result = await mc.reconcileUntilStable('default', 'dangling-link', { maxPasses: 5 });
    const stalled = condition(result.object!, 'Stalled')!;
    assert.equal(stalled.reason, 'InvalidSpec');
    assert.match(stalled.message ?? '', /target "httpclient" is not a component/);
    assert.equal(wadm.count(), 0);
  });

  it("never lets namespace B overwrite, deploy, undeploy or delete namespace A's application", async () => {
    const mc = metacontroller();
    await deploy(mc, wasmApp().inNamespace('team-a').build());
    const before = JSON.stringify(await wadm.model('default', 'hello-world'));
    mc.apply(wasmApp().inNamespace('team-b').described('hijack').build() as never);
    const result = await mc.reconcileUntilStable('team-b', 'hello-world', { maxPasses: 5 });
    assert.equal(condition(result.object!, 'Stalled')!.reason, 'OwnershipConflict');
    mc.apply(wasmApp().inNamespace('team-b').suspended().build() as never);
    await mc.reconcileUntilStable('team-b', 'hello-world', { maxPasses: 5 });
    await mc.deleteAndFinalize('team-b', 'hello-world', { maxPasses: 5 });
    assert.equal(JSON.stringify(await wadm.model('default', 'hello-world')), before);
    const writes = wadm.requests.filter((r) => ['put', 'deploy', 'undeploy', 'del'].includes(r.op));
    assert.deepEqual(
      writes.map((r) => r.op),
      ['put', 'deploy'],
      'only team-a ever wrote',
    );
  });

  it("reports a wadm put rejection as ManifestInvalid with wadm's message", async () => {
    const mc = metacontroller();
    // wadm's validation is deterministic: it refuses every retry too.
    wadm.inject('put', { kind: 'error', message: 'Unable to parse manifest: something wadm dislikes' }, { times: 100 });
    mc.apply(wasmApp().build() as never);
    const result = await mc.reconcileUntilStable('default', 'hello-world', { maxPasses: 5 });
    assert.equal(condition(result.object!, 'Stalled')!.reason, 'ManifestInvalid');
    assert.match(condition(result.object!, 'Ready')!.message ?? '', /something wadm dislikes/);
  });
});

describe('when NATS goes away', () => {
  it('reports no responders as LatticeUnavailable while wadm is not running', async () => {
    const mc = metacontroller();
    await wadm.pause();
    try {
      mc.apply(wasmApp().build() as never);
      await mc.reconcile('default', 'hello-world');
      const obj = mc.get('default', 'hello-world')!;
      assert.equal(condition(obj, 'Ready')!.reason, 'LatticeUnavailable');
      assert.match(condition(obj, 'Ready')!.message ?? '', /NoResponders/);
    } finally {
      await wadm.resume();
    }
    await mc.waitFor('default', 'hello-world', isReady, WADM_WAIT);
  });

  // Last: wadm and the simulated host do not reliably come back whole from a NATS restart.
  it('leaves calls to peers during the grace, then answers 200 with Ready=Unknown, and recovers without a restart', async () => {
    const mc = metacontroller();
    await deploy(mc, wasmApp().build());
    await nats.stop();
    await until(() => !running.service.link.isConnected());
    assert.equal((await fetch(`${running.url}/healthz`)).status, 200);
    mc.apply(wasmApp().described('edited while NATS was down').build() as never);
    // Within NATS_OUTAGE_GRACE: not ready, and a call is refused (a peer would answer it), the status untouched.
    const readyz = await fetch(`${running.url}/readyz`);
    if (readyz.status === 503) {
      const refused = await mc.reconcile('default', 'hello-world');
      assert.ok(
        refused.httpStatus === 429 || refused.httpStatus === 200,
        `refused within the grace, or the grace is over: ${refused.error}`,
      );
    }
    // Past it, with no peer connected: ready again, answering the outage.
    await until(async () => (await fetch(`${running.url}/readyz`)).status === 200, { what: 'ready again past the grace' });
    const down = await mc.reconcile('default', 'hello-world');
    assert.equal(down.httpStatus, 200);
    const unknown = mc.get('default', 'hello-world')!;
    assert.equal(condition(unknown, 'Ready')!.status, 'Unknown');
    assert.equal(condition(unknown, 'Ready')!.reason, 'LatticeUnavailable');
    assert.ok((unknown.status as { deployedVersion?: string }).deployedVersion, 'last known deployedVersion is kept');
    assert.ok(down.resyncAfterSeconds! > 0);

    await scenario.restartNats();
    await running.connected();
    assert.equal((await fetch(`${running.url}/readyz`)).status, 200);
    const recovered = await mc.waitFor('default', 'hello-world', isReady, WADM_WAIT);
    const status = recovered.object!.status as { version: string; deployedVersion: string };
    assert.equal(status.deployedVersion, status.version);
    assert.equal((await wadm.model('default', 'hello-world'))!.deployed, status.version, 'the edit made while NATS was down is deployed');
  });
});
