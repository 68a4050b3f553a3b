// The usual stage of a service test: a real nats-server with JetStream, the real wadm behind the
// fault-injecting relay, one simulated host in lattice `default`, and the whole service in-process;
// Metacontroller emulators pointed at it; and a reset between tests that deletes every application
// in wadm, replaces the host, and makes the service forget what it knew.
import { startLattice, WADM_STALL_TOLERANT_MS, type SimulatedLattice } from './host-sim.js';
import { metacontrollerFor, type FakeMetacontroller } from './metacontroller.js';
import { startNatsServer, type NatsServer } from './nats-server.js';
import { CleanupStack, startService, type RunningService } from './service.js';
import { startRelayedWadm, type WadmRelay } from './wadm-relay.js';
import { until } from './wait.js';
import type { ServiceOptions } from '../../src/wiring/build.js';

const LATTICE = 'default';

/** For waits on what wadm does with the host: past wadm's rare ~35 s stall (see host-sim/wadm-ready.ts). */
export const WADM_WAIT = { timeoutMs: WADM_STALL_TOLERANT_MS, intervalMs: 50 };

export interface Scenario {
  nats: NatsServer;
  wadm: WadmRelay;
  sim: SimulatedLattice;
  running: RunningService;
  metacontroller(options?: { url?: string; etag?: boolean }): FakeMetacontroller;
  reset(): Promise<void>;
  /** nats.restart(), then wadm and the host started again: the service must recover on its own. */
  restartNats(): Promise<void>;
  stop(): Promise<void>;
}

export async function startScenario(env: Record<string, string> = {}, options: ServiceOptions = {}): Promise<Scenario> {
  // What has started is stopped, last first, at stop() or as soon as a later start fails.
  const cleanups = new CleanupStack();
  try {
    const nats = await startNatsServer();
    cleanups.after(() => nats.dispose());
    // File streams: a test that restarts NATS must find wadm's store again, as a production NATS keeps it.
    const wadm = await startRelayedWadm(nats.url, ['--stream-persistence', 'file']);
    cleanups.after(() => wadm.stop());
    const lattice = () => startLattice({ servers: nats.url, lattice: LATTICE, heartbeatMs: 500, waitForWadm: true });
    let sim = await lattice();
    cleanups.after(() => sim.stop());
    const running = await startService(cleanups, { NATS_URL: nats.url, ...env }, { deployGraceMs: 300, ...options });
    await running.connected();
    return {
      nats,
      wadm,
      get sim() {
        return sim;
      },
      running,
      metacontroller: ({ url = running.url, etag = false } = {}) => metacontrollerFor(url, { etag }),
      async reset() {
        const deleted = await wadm.clear(LATTICE);
        await wadm.forgetStatuses(LATTICE, deleted);
        // A command wadm sent before the delete may still start something: a new host starts empty.
        for (const host of sim.hosts) await sim.stopHost(host.id);
        await sim.addHost();
        wadm.reset();
        running.service.knowledge.reset();
      },
      async restartNats() {
        const reconnectsBefore = sim.reconnectCount;
        await nats.restart();
        // wadm 0.21.1 and the simulated hosts do not all come back whole from a NATS restart
        // (status-trust.test.ts): the hosts are replaced. Each old one says host_stopped on the restarted
        // server, and wadm takes that in, before anything else: a host that merely vanished stays in
        // wadm's store, commanded and counted, until its reaper drops it ~70 s later. Taken in is not
        // enough: wadm must hold no host but the new ones (wadm-ready.ts, untilWadmHoldsOnly).
        await until(() => sim.reconnectCount > reconnectsBefore, { what: 'the simulated hosts reconnected' });
        await sim.stop();
        await wadm.untilHoldsOnly(LATTICE, []);
        await wadm.startWadm();
        sim = await lattice();
        await wadm.untilHoldsOnly(
          LATTICE,
          sim.hosts.map((host) => host.id),
        );
      },
      stop: () => cleanups.run(),
    };
  } catch (err) {
    await cleanups.run();
    throw err;
  }
}
