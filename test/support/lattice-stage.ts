// The stage of the end-to-end tests about lattices: a real nats-server with JetStream, the real wadm,
// a simulated host in each named lattice, the service as its own process, a NATS connection of the
// test's own, and Metacontroller's emulator pointed at the service.
import { connect, type NatsConnection } from 'nats';
import { startLattice, type SimulatedLattice } from './host-sim.js';
import { metacontrollerFor, type FakeMetacontroller } from './metacontroller.js';
import { startNatsServer, type NatsServer, type NatsServerOptions } from './nats-server.js';
import { CleanupStack } from './service.js';
import { startServiceProcess, type ServiceProcess, type ServiceProcessOptions } from './service-process.js';
import { startWadm, type WadmProcess } from './wadm.js';

export interface LatticeStage {
  nats: NatsServer;
  wadm: WadmProcess;
  sims: SimulatedLattice[];
  service: ServiceProcess;
  /** The test's own connection (the server's no_auth_user, when it has one). */
  nc: NatsConnection;
  mc: FakeMetacontroller;
  stop(): Promise<void>;
}

export interface LatticeStageOptions {
  /** Lattices with one simulated host each. */
  hosted: string[];
  nats?: NatsServerOptions;
  /** The service's environment besides NATS_URL. */
  serviceEnv?: Record<string, string>;
  service?: ServiceProcessOptions;
}

export async function startLatticeStage(options: LatticeStageOptions): Promise<LatticeStage> {
  // What has started is stopped, last first, at stop() or as soon as a later start fails.
  const cleanups = new CleanupStack();
  try {
    const nats = await startNatsServer(options.nats);
    cleanups.after(() => nats.dispose());
    const wadm = await startWadm(nats.url);
    cleanups.after(() => wadm.stop());
    const sims = await Promise.all(
      options.hosted.map((lattice) => startLattice({ servers: nats.url, lattice, hosts: [{}], heartbeatMs: 500, waitForWadm: true })),
    );
    cleanups.after(() => Promise.all(sims.map((s) => s.stop())));
    const nc = await connect({ servers: nats.url });
    cleanups.after(() => nc.close());
    const service = await startServiceProcess({ NATS_URL: nats.url, ...options.serviceEnv }, options.service);
    cleanups.after(() => service.stop());
    const mc = metacontrollerFor(service.url);
    return { nats, wadm, sims, service, nc, mc, stop: () => cleanups.run() };
  } catch (err) {
    await cleanups.run();
    throw err;
  }
}
