// The shape we ship: two replicas behind a Service (the stand-in routes each call to a ready
// replica, as kube-proxy does), the Metacontroller emulator calling through it, real nats-server,
// the real wadm and a simulated host. Each replica reaches NATS through its own relay, so that
// one can be cut off alone. Every wait is for a state; status changes are counted, not timed.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type NatsConnection } from 'nats';
import { startLattice, type SimulatedLattice } from '../support/host-sim.js';
import { condition, metacontrollerFor, type FakeMetacontroller, type K8sObject } from '../support/metacontroller.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { freePort } from '../support/ports.js';
import { wasmApp } from '../support/resources.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { startServiceStandIn, type ServiceStandIn } from '../support/service-stand-in.js';
import { startTcpRelay, type TcpRelay } from '../support/tcp-relay.js';
import { startWadm, type WadmProcess } from '../support/wadm.js';
import { until } from '../support/wait.js';

const LATTICE = 'shipped';
const NAMES = ['app-1', 'app-2', 'app-3', 'app-4', 'app-5'];
/** Short, so that the test waits seconds; the shipped default is 30 s (docs/operations.md). */
const GRACE = '2s';

let nats: NatsServer;
let wadm: WadmProcess;
let sim: SimulatedLattice;
let relays: TcpRelay[];
let replicas: ServiceProcess[];
let service: ServiceStandIn;
let nc: NatsConnection;

before(async () => {
  nats = await startNatsServer();
  // File streams: wadm's store must survive the NATS restart below, as a production NATS's does.
  wadm = await startWadm(nats.url, ['--stream-persistence', 'file']);
  sim = await startLattice({ servers: nats.url, lattice: LATTICE, hosts: [{}], heartbeatMs: 500, waitForWadm: true });
  relays = [await startTcpRelay(nats.port), await startTcpRelay(nats.port)];
  const ports = [await freePort(), await freePort()];
  replicas = await Promise.all(
    ports.map((port, i) =>
      startServiceProcess(
        { NATS_URL: `nats://127.0.0.1:${relays[i]!.port}`, NATS_OUTAGE_GRACE: GRACE, PEERS: `127.0.0.1:${ports[1 - i]}` },
        { port },
      ),
    ),
  );
  service = await startServiceStandIn(replicas.map((r) => r.url));
  await until(() => service.ready().length === 2, { what: 'both replicas ready behind the Service', timeoutMs: 60_000 });
  nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
});
after(async () => {
  await service?.close();
  await Promise.all((replicas ?? []).map((r) => r.stop()));
  await Promise.all((relays ?? []).map((r) => r.close()));
  await nc?.close();
  await sim?.stop();
  await wadm?.stop();
  await nats?.dispose();
});

const ready = (obj: K8sObject | undefined) => condition(obj, 'Ready');

/** The Ready condition of each resource after each pass: what `kubectl get` would have shown. */
class Watcher {
  readonly seen = new Map<string, string[]>();
  constructor(private readonly mc: FakeMetacontroller) {}

  /** One resync pass over every resource, through the Service. */
  async pass(): Promise<void> {
    for (const name of NAMES) {
      await this.mc.reconcile('default', name);
      const r = ready(this.mc.get('default', name));
      const shown = `${r?.status}/${r?.reason}`;
      const list = this.seen.get(name) ?? [];
      if (list.at(-1) !== shown) list.push(shown);
      this.seen.set(name, list);
    }
  }

  /** Passes until every resource satisfies `predicate`. */
  async until(predicate: (obj: K8sObject | undefined) => boolean, what: string): Promise<void> {
    await until(
      async () => {
        await this.pass();
        return NAMES.every((name) => predicate(this.mc.get('default', name)));
      },
      { what: () => `${what}: ${JSON.stringify(Object.fromEntries(this.seen))}`, timeoutMs: 120_000, intervalMs: 200 },
    );
  }

  reset(): void {
    this.seen.clear();
  }
}

async function versions(name: string): Promise<string[]> {
  const reply = await nc.request(`wadm.api.${LATTICE}.model.versions.${name}`, '', { timeout: 5000 });
  return ((JSON.parse(reply.string()) as { versions?: { version: string }[] }).versions ?? []).map((v) => v.version);
}

describe('two replicas behind the Service', () => {
  let mc: FakeMetacontroller;
  let watcher: Watcher;

  before(async () => {
    mc = metacontrollerFor(service.url);
    for (const name of NAMES) mc.apply(wasmApp().named(name).inLattice(LATTICE).build() as never);
    watcher = new Watcher(mc);
    await watcher.until((obj) => ready(obj)?.status === 'True', 'all Ready');
  });

  it('one replica cut off from NATS: it leaves the calls to the other, and no status changes', async () => {
    watcher.reset();
    await watcher.pass();
    relays[0]!.cut();
    // Cut off past its grace, it asks its peer, which is connected: it stays out of the Service.
    await until(async () => JSON.stringify(await (await fetch(`${replicas[0]!.url}/readyz`)).json()).includes('a peer is'), {
      what: 'replica 0 stays out because its peer is connected',
      timeoutMs: 60_000,
      intervalMs: 200,
    });
    // The Service learns it at its next probe, as Endpoints lag the kubelet: calls until then may
    // still reach replica 0 (answered 429 with Retry-After, status unchanged).
    await until(() => service.ready().join() === '1', { what: 'the Service routes to replica 1 alone', timeoutMs: 60_000 });
    const sentBefore = [...service.sent];
    for (let i = 0; i < 10; i++) await watcher.pass();
    assert.equal(service.sent[0], sentBefore[0], 'the Service sent nothing to the replica that is cut off');
    for (const name of NAMES) assert.deepEqual(watcher.seen.get(name), ['True/Deployed'], `${name} never changed`);
    relays[0]!.mend();
    await until(() => service.ready().length === 2, { what: 'replica 0 back in the Service', timeoutMs: 60_000 });
  });

  it('NATS stopped for good: every status shows the outage once, then Ready again when NATS is back, no new version', async () => {
    const before = new Map<string, string[]>();
    for (const name of NAMES) before.set(name, await versions(name));
    await nc.close();
    watcher.reset();
    await watcher.pass();
    await nats.stop();
    // Both replicas are cut off: after the grace neither has a connected peer, both are ready again
    // and answer LatticeUnavailable (docs/operations.md: the outage bound).
    await watcher.until(
      (obj) => ready(obj)?.status === 'Unknown' && ready(obj)?.reason === 'LatticeUnavailable',
      'the outage in every status',
    );
    // Readiness reaches the Service a probe later than the status reaches the resource.
    await until(() => service.ready().length === 2, { what: 'both replicas answer the outage', timeoutMs: 60_000 });
    for (let i = 0; i < 5; i++) await watcher.pass();
    for (const name of NAMES) {
      assert.deepEqual(watcher.seen.get(name), ['True/Deployed', 'Unknown/LatticeUnavailable'], `${name} changed once, and stayed`);
      const status = mc.get('default', name)!.status as { deployedVersion?: string; lattice?: string };
      assert.equal(status.lattice, LATTICE);
      assert.ok(status.deployedVersion, 'the last known deployed version is carried over');
    }

    await nats.restart();
    await watcher.until((obj) => ready(obj)?.status === 'True', 'Ready again');
    nc = await connect({ servers: nats.url });
    for (const name of NAMES) assert.deepEqual(await versions(name), before.get(name), `no new version of ${name}`);
  });
});
