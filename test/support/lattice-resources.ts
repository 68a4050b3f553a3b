// The stage of the WasmCloudLattice tests of the fast tier: a real nats-server, the real wadm behind
// the relay, simulated hosts of one lattice (with labels), the whole service in-process, and the
// Metacontroller emulator twice over: for WasmCloudApplications and for WasmCloudLattices (parents
// in memory). Also what they put into wadm themselves, as `wash app` would.
import { connect, headers, type NatsConnection } from 'nats';
import type { ServiceOptions } from '../../src/wiring/build.js';
import { startLattice, type SimulatedLattice, type StringMap } from './host-sim.js';
import { latticeMetacontrollerFor, metacontrollerFor, type FakeMetacontroller } from './metacontroller.js';
import { startNatsServer, type NatsServer } from './nats-server.js';
import { CleanupStack, startService, type RunningService } from './service.js';
import { startRelayedWadm, type WadmRelay } from './wadm-relay.js';

export interface LatticeResourceStage {
  nats: NatsServer;
  wadm: WadmRelay;
  sim: SimulatedLattice;
  running: RunningService;
  /** A connection of the test's own, as `wash` would have. */
  nc: NatsConnection;
  apps: FakeMetacontroller;
  lattices: FakeMetacontroller;
  /** Puts (and with `deploy`, deploys) an application without an owner annotation, as `wash app deploy` does. */
  putUnowned(name: string, options?: { deploy?: boolean }): Promise<void>;
  stop(): Promise<void>;
}

export async function startLatticeResourceStage(options: {
  lattice: string;
  hosts: { labels?: StringMap }[];
  env?: Record<string, string>;
  service?: ServiceOptions;
}): Promise<LatticeResourceStage> {
  const cleanups = new CleanupStack();
  try {
    const nats = await startNatsServer();
    cleanups.after(() => nats.dispose());
    const wadm = await startRelayedWadm(nats.url);
    cleanups.after(() => wadm.stop());
    const sim = await startLattice({
      servers: nats.url,
      lattice: options.lattice,
      hosts: options.hosts,
      heartbeatMs: 500,
      waitForWadm: true,
    });
    cleanups.after(() => sim.stop());
    const running = await startService(cleanups, { NATS_URL: nats.url, ...options.env }, { deployGraceMs: 300, ...options.service });
    await running.connected();
    const nc = await connect({ servers: nats.url });
    cleanups.after(() => nc.close());
    return {
      nats,
      wadm,
      sim,
      running,
      nc,
      apps: metacontrollerFor(running.url),
      lattices: latticeMetacontrollerFor(running.url),
      putUnowned: (name, { deploy = false } = {}) => putUnowned(nc, options.lattice, name, deploy),
      stop: () => cleanups.run(),
    };
  } catch (err) {
    await cleanups.run();
    throw err;
  }
}

/** Puts (and deploys) an empty application of version v1 with wadm's API, without an owner annotation, as `wash app deploy` does. */
export async function putUnowned(nc: NatsConnection, lattice: string, name: string, deploy: boolean): Promise<void> {
  const wadmApi = async (op: string, body: unknown) => {
    const h = headers();
    h.set('Content-Type', 'application/json');
    const reply = await nc.request(`wadm.api.${lattice}.model.${op}`, JSON.stringify(body), { timeout: 5000, headers: h });
    const { result, message } = reply.json<{ result: string; message?: string }>();
    if (!['created', 'acknowledged'].includes(result)) throw new Error(`wadm answered ${op} with ${result}: ${message}`);
  };
  const metadata = { name, annotations: { version: 'v1' } };
  await wadmApi('put', { apiVersion: 'core.oam.dev/v1beta1', kind: 'Application', metadata, spec: { components: [] } });
  if (deploy) await wadmApi(`deploy.${name}`, {});
}
