// "The status says what wadm says", proven as a platform team would see it: the service as its
// own process, driven like Metacontroller, against real nats-server 2.11, the real wadm 0.21.1 and
// simulated hosts. Outages, drift made with wadm's own API (as `wash app` does), replicas with
// different memories, and a manifest NATS cannot carry. Every wait is for a state, not a time.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, headers, type NatsConnection } from 'nats';
import { startLattice, type SimulatedLattice } from '../support/host-sim.js';
import { metacontrollerFor, condition, type FakeMetacontroller, type K8sObject } from '../support/metacontroller.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { wasmApp, hookRequest, type Resource } from '../support/resources.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { startWadm, type WadmProcess } from '../support/wadm.js';
import { until } from '../support/wait.js';

const LATTICE = 'trust';
let nats: NatsServer;
let wadm: WadmProcess;
let sim: SimulatedLattice;
let service: ServiceProcess;
let nc: NatsConnection;

before(async () => {
  nats = await startNatsServer();
  // File streams: the NATS restart below must keep wadm's store, as a production NATS does.
  wadm = await startWadm(nats.url, ['--stream-persistence', 'file']);
  sim = await startLattice({ servers: nats.url, lattice: LATTICE, hosts: [{}], heartbeatMs: 500, waitForWadm: true });
  service = await startServiceProcess({ NATS_URL: nats.url });
  nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
});
after(async () => {
  await service?.stop();
  await nc?.close();
  await sim?.stop();
  await wadm?.stop();
  await nats?.dispose();
});

const inTrustLattice = (name: string, spec: Record<string, unknown> = {}): Resource =>
  wasmApp().inLattice(LATTICE).with(spec).named(name).build();
const ready = (obj: K8sObject | undefined) => condition(obj, 'Ready');

async function settle(mc: FakeMetacontroller, name: string): Promise<K8sObject> {
  mc.apply(inTrustLattice(name) as never);
  const { object } = await mc.waitFor('default', name, (obj) => ready(obj)?.status === 'True', { timeoutMs: 60_000, intervalMs: 100 });
  return object!;
}

async function versions(name: string): Promise<{ version: string; deployed: boolean }[]> {
  const reply = await nc.request(`wadm.api.${LATTICE}.model.versions.${name}`, '', { timeout: 5000 });
  return (JSON.parse(reply.string()) as { versions?: { version: string; deployed: boolean }[] }).versions ?? [];
}

/** A request to wadm's API as `wash app` sends it (JSON with its Content-Type for a put). */
async function wadmRequest(op: string, body: unknown): Promise<{ result: string; message?: string }> {
  const h = headers();
  h.set('Content-Type', 'application/json');
  const reply = await nc.request(`wadm.api.${LATTICE}.model.${op}`, JSON.stringify(body), { timeout: 5000, headers: h });
  return JSON.parse(reply.string()) as { result: string };
}

describe('drift made outside Kubernetes', () => {
  it('a foreign put and deploy is healed at the next sync, said in the status and counted; delete then leaves nothing', async () => {
    const mc = metacontrollerFor(service.url);
    const obj = await settle(mc, 'drifty');
    const ours = (obj.status as { version: string }).version;
    const manifest = {
      apiVersion: 'core.oam.dev/v1beta1',
      kind: 'Application',
      metadata: { name: 'drifty', annotations: { version: 'oob-1' } },
      spec: { components: [] },
    };
    assert.match((await wadmRequest('put', manifest)).result, /created|newversion/);
    assert.equal((await wadmRequest('deploy.drifty', { version: 'oob-1' })).result, 'acknowledged');
    const driftsBefore = await service.metric('drift_corrections_total{kind="other_version"}');

    await mc.reconcile('default', 'drifty');
    assert.deepEqual((await versions('drifty')).find((v) => v.deployed)?.version, ours);
    assert.match(
      String((mc.get('default', 'drifty')!.status as { message: string }).message),
      new RegExp(`^wadm had version oob-1 deployed outside Kubernetes; redeployed version ${ours}`),
    );
    assert.equal(await service.metric('drift_corrections_total{kind="other_version"}'), driftsBefore + 1);
    await mc.waitFor('default', 'drifty', (o) => ready(o)?.status === 'True', { timeoutMs: 60_000, intervalMs: 200 });

    const finalized = await mc.deleteAndFinalize('default', 'drifty');
    assert.ok(finalized);
    assert.deepEqual(await versions('drifty'), [], 'the foreign version went with the model');
  });

  it('an undeploy outside Kubernetes is healed at the next sync, said and counted', async () => {
    const mc = metacontrollerFor(service.url);
    const obj = await settle(mc, 'undone');
    const ours = (obj.status as { version: string }).version;
    const before = await service.metric('drift_corrections_total{kind="undeployed"}');
    assert.equal((await wadmRequest('undeploy.undone', {})).result, 'acknowledged');
    // wadm announces the undeploy: the next sync sees it, whatever this replica remembered.
    await mc.reconcile('default', 'undone');
    assert.equal((await versions('undone')).find((v) => v.deployed)?.version, ours);
    assert.match(
      String((mc.get('default', 'undone')!.status as { message: string }).message),
      /^wadm had nothing deployed \(undeployed outside Kubernetes\); redeployed/,
    );
    assert.equal(await service.metric('drift_corrections_total{kind="undeployed"}'), before + 1);
  });

  it('after a foreign put alone, a warm and a cold replica answer alike: at most one status change in 8 alternating syncs', async () => {
    const mc = metacontrollerFor(service.url);
    await settle(mc, 'twins');
    const manifest = {
      apiVersion: 'core.oam.dev/v1beta1',
      kind: 'Application',
      metadata: { name: 'twins', annotations: { version: 'oob-2' } },
      spec: { components: [] },
    };
    assert.match((await wadmRequest('put', manifest)).result, /newversion/);
    const cold = await startServiceProcess({ NATS_URL: nats.url });
    try {
      let parent = mc.get('default', 'twins')! as unknown as Resource;
      let changes = 0;
      const seen: string[] = [];
      for (let i = 0; i < 8; i++) {
        const url = i % 2 === 0 ? service.url : cold.url;
        const response = await fetch(`${url}/sync`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(hookRequest(parent)),
        });
        const { status } = (await response.json()) as { status: Record<string, unknown> };
        if (JSON.stringify(status) !== JSON.stringify(parent.status)) changes++;
        seen.push(`${String(status['phase'])}/${String((status['conditions'] as { status: string }[])[0]!.status)}`);
        parent = { ...parent, status };
      }
      assert.deepEqual([...new Set(seen)], ['Deployed/True'], `answers: ${seen.join(', ')}`);
      assert.ok(changes <= 1, `${changes} status changes`);
    } finally {
      await cold.stop();
    }
  });
});

describe('a manifest larger than NATS carries', () => {
  it('is ManifestTooLarge: no put over 5 syncs, readiness untouched', async () => {
    const puts: string[] = [];
    const watcher = nc.subscribe('wadm.api.*.model.put', { callback: (_err, msg) => void puts.push(msg.subject) });
    const putsCounted = await service.metric('wadm_requests_total{operation="put",outcome="ok"}');
    const mc = metacontrollerFor(service.url);
    const big = 'x'.repeat(1.1 * 1024 * 1024);
    mc.apply(
      inTrustLattice('huge', {
        components: [
          {
            name: 'c',
            type: 'component',
            properties: { image: 'ghcr.io/x/y:1', config: [{ name: 'blob', properties: { data: big } }] },
            traits: [{ type: 'spreadscaler', properties: { instances: 1 } }],
          },
        ],
      }) as never,
    );
    for (let i = 0; i < 5; i++) await mc.reconcile('default', 'huge');
    await nc.flush();
    watcher.unsubscribe();
    const obj = mc.get('default', 'huge')!;
    assert.equal(condition(obj, 'Stalled')?.reason, 'ManifestTooLarge');
    assert.match(String((obj.status as { message: string }).message), /more than the NATS server's max_payload of 1048576 bytes/);
    assert.deepEqual(puts, []);
    assert.equal(await service.metric('wadm_requests_total{operation="put",outcome="ok"}'), putsCounted);
    assert.equal(await service.ready(), 200);
  });
});

// Last: wadm and the simulated hosts do not all come back whole from a NATS restart, so nothing runs after it.
describe('an outage never leaves a stale Ready=True', () => {
  it('wadm down while NATS is up: settled apps turn Unknown within the liveness window; wadm back: Ready, nothing added or lost', async () => {
    const mc = metacontrollerFor(service.url);
    await settle(mc, 'quiet');
    const before = await versions('quiet');
    await wadm.stop();
    // The bound (docs/how-it-works.md, How fast an outage shows): the first resync after wadm has
    // been silent for the 5 s liveness window.
    await mc.waitFor('default', 'quiet', (obj) => ready(obj)?.status === 'Unknown', { timeoutMs: 60_000, intervalMs: 500 });
    assert.equal(ready(mc.get('default', 'quiet'))?.reason, 'LatticeUnavailable');
    assert.equal(await service.ready(), 200, 'NATS is fine: readiness is about NATS');

    wadm = await startWadm(nats.url, ['--stream-persistence', 'file']);
    await mc.waitFor('default', 'quiet', (obj) => ready(obj)?.status === 'True', { timeoutMs: 60_000, intervalMs: 200 });
    assert.deepEqual(await versions('quiet'), before);
  });
  // NATS down for everyone is answered through the shipped Service: test/lattice/topology.test.ts.
});
