// The usual stage of a service test: a real nats-server, the wadm double with healthy simulated
// hosts, and the whole service in-process; Metacontroller emulators pointed at it; and a reset
// between tests (the double forgets its apps, so the service's caches must too).
import { startFakeWadm, type FakeWadm } from './fake-wadm.js';
import { FakeMetacontroller } from './metacontroller.js';
import { startNatsServer, type NatsServer } from './nats-server.js';
import { startService, type RunningService } from './service.js';
import type { ServiceOptions } from '../../src/service/build.js';

export interface Scenario {
  nats: NatsServer;
  wadm: FakeWadm;
  running: RunningService;
  metacontroller(options?: { url?: string; etag?: boolean }): FakeMetacontroller;
  reset(): void;
  stop(): Promise<void>;
}

export async function startScenario(env: Record<string, string> = {}, options: ServiceOptions = {}): Promise<Scenario> {
  const nats = await startNatsServer({ jetstream: false });
  const wadm = await startFakeWadm({ servers: nats.url });
  const cleanups: (() => unknown)[] = [];
  const running = await startService({ after: (fn) => void cleanups.push(fn) }, { NATS_URL: nats.url, ...env }, { deployGraceMs: 100, ...options });
  await running.connected();
  const reset = () => {
    wadm.reset();
    running.service.knowledge.reset();
    wadm.setHosts('default', { behaviour: 'healthy', settleMs: 10 });
  };
  reset();
  return {
    nats,
    wadm,
    running,
    metacontroller: ({ url = running.url, etag = false } = {}) =>
      new FakeMetacontroller({ syncUrl: `${url}/sync`, finalizeUrl: `${url}/finalize`, etag, resource: { apiVersion: 'core.wasmcloud.com/v1beta1', kind: 'WasmCloudApplication' } }),
    reset,
    async stop() {
      for (const cleanup of cleanups.reverse()) await cleanup();
      await wadm.stop();
      await nats.dispose();
    },
  };
}
