// The whole chain with wasmCloud hosts: Metacontroller emulator → our service → real wadm 0.21.1 →
// simulated hosts. Proves that wadm's real status reaches the resource: Ready=True for a real
// deployment, Failed/Stalled with wadm's message for a spread no host can satisfy, Ready back to
// False when the only host leaves. Each test has its own lattice (wadm keeps hosts per lattice).
import { after, before, describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { startLattice, WADM_STALL_TOLERANT_MS, type SimulatedLattice } from '../support/host-sim.js';
import { metacontrollerFor, condition, type FakeMetacontroller, type K8sObject } from '../support/metacontroller.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { wasmApp } from '../support/resources.js';
import { CleanupStack, startService, type RunningService } from '../support/service.js';
import { startWadm, type WadmProcess } from '../support/wadm.js';

let nats: NatsServer;
let wadm: WadmProcess;
let running: RunningService;
const cleanups = new CleanupStack();

before(async () => {
  nats = await startNatsServer();
  wadm = await startWadm(nats.url);
  running = await startService(cleanups, { NATS_URL: nats.url }, { deployGraceMs: 2000 });
  await running.connected();
});
after(async () => {
  await cleanups.run();
  await wadm.stop();
  await nats.dispose();
});

async function lattice(t: TestContext, id: string, labels: Record<string, string> = {}): Promise<SimulatedLattice> {
  const sim = await startLattice({ servers: nats.url, lattice: id, hosts: [{ labels }], heartbeatMs: 500, waitForWadm: true });
  t.after(() => sim.stop());
  return sim;
}

/** Metacontroller resyncs on resyncAfterSeconds; here we poll every 100 ms instead of waiting. */
function until(mc: FakeMetacontroller, predicate: (obj: K8sObject) => boolean, timeoutMs = WADM_STALL_TOLERANT_MS) {
  return mc.waitFor('default', 'hello-world', (obj) => obj !== undefined && predicate(obj), { timeoutMs, intervalMs: 100 });
}

const phase = (obj: K8sObject) => (obj.status as { phase?: string }).phase;

describe('with simulated wasmCloud hosts', () => {
  it('reaches Ready=True with every scaler deployed, then settles', async (t) => {
    const sim = await lattice(t, 'hosts-ready');
    const mc = metacontrollerFor(running.url);
    mc.apply(wasmApp().inLattice('hosts-ready').build() as never);
    const { object } = await until(mc, (obj) => condition(obj, 'Ready')?.status === 'True');
    const status = object!.status as {
      phase: string;
      version: string;
      deployedVersion: string;
      scalers: { kind: string; status: string }[];
    };
    assert.equal(status.phase, 'Deployed');
    assert.equal(status.deployedVersion, status.version);
    assert.deepEqual(status.scalers.map((s) => `${s.kind}:${s.status}`).sort(), [
      'LinkScaler:Deployed',
      'SpreadScaler:Deployed',
      'SpreadScaler:Deployed',
    ]);
    assert.equal(sim.components().length, 1, 'the host runs the component');
    assert.equal(sim.providers().length, 1, 'and the provider');
    const settled = await mc.reconcileUntilStable('default', 'hello-world', { maxPasses: 4 });
    assert.equal(settled.stable, true);
  });

  it("reports a spread no host can satisfy as Failed and Stalled, with wadm's message", async (t) => {
    await lattice(t, 'hosts-picky', { zone: 'earth' });
    const mc = metacontrollerFor(running.url);
    const picky = wasmApp().build();
    const components = (picky.spec['components'] as { traits?: { type: string; properties: Record<string, unknown> }[] }[]).map((c) => ({
      ...c,
      traits: (c.traits ?? []).map((tr) =>
        tr.type === 'spreadscaler'
          ? { ...tr, properties: { instances: 1, spread: [{ name: 'picky', requirements: { zone: 'moon' } }] } }
          : tr,
      ),
    }));
    mc.apply(wasmApp().with({ components }).inLattice('hosts-picky').build() as never);
    const { object } = await until(mc, (obj) => condition(obj, 'Stalled')?.status === 'True');
    assert.equal(phase(object!), 'Failed');
    const stalled = condition(object!, 'Stalled')!;
    assert.equal(stalled.reason, 'ScalerFailed');
    assert.match(stalled.message ?? '', /picky spread requires 1 instances|Could not satisfy spread picky/);
    assert.equal(condition(object!, 'Ready')!.status, 'False');
  });

  it('turns Ready back to False when the only host leaves, and Ready again when a host comes', async (t) => {
    const sim = await lattice(t, 'hosts-leaving');
    const mc = metacontrollerFor(running.url);
    mc.apply(wasmApp().inLattice('hosts-leaving').build() as never);
    await until(mc, (obj) => condition(obj, 'Ready')?.status === 'True');
    await sim.stopHost(sim.hosts[0]!.id);
    const { object } = await until(mc, (obj) => condition(obj, 'Ready')?.status === 'False');
    assert.equal(phase(object!), 'Failed');
    assert.match(condition(object!, 'Ready')!.message ?? '', /eligible hosts|instances/);
    await sim.addHost({});
    await until(mc, (obj) => condition(obj, 'Ready')?.status === 'True');
  });

  it('upgrades in place on a spec edit: the new version becomes Ready', async (t) => {
    await lattice(t, 'hosts-edit');
    const mc = metacontrollerFor(running.url);
    mc.apply(wasmApp().inLattice('hosts-edit').build() as never);
    const first = await until(mc, (obj) => condition(obj, 'Ready')?.status === 'True');
    const v1 = (first.object!.status as { version: string }).version;
    mc.apply(wasmApp().described('edited').inLattice('hosts-edit').build() as never);
    const second = await until(
      mc,
      (obj) => condition(obj, 'Ready')?.status === 'True' && (obj.status as { version: string }).version !== v1,
    );
    const status = second.object!.status as { version: string; deployedVersion: string };
    assert.equal(status.deployedVersion, status.version);
  });
});
