// Wires the service from its configuration: NATS link, wadm client, status cache, hooks and the
// HTTP app. main.ts runs it as a process; tests run it in-process against real servers.
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { createHooks } from './hooks.js';
import { startNatsLink, type NatsLink } from './lattice/connection.js';
import { LatticeGateway } from './lattice/gateway.js';
import { natsSecurityOptions } from './lattice/nats-auth.js';
import { StatusCache } from './lattice/status-cache.js';
import { WadmClient } from './lattice/wadm-client.js';
import { Metrics } from './metrics.js';
import { buildServer } from './server.js';

const HOOK_TIMEOUT_MS = 10_000; // Metacontroller's default webhook timeout

export interface ServiceOptions {
  now?: () => number;
  /** See StatusCache: how long after our deploy an older status is not trusted. */
  deployGraceMs?: number;
  statusCacheEntries?: number;
  natsRetryDelayMs?: number;
}

export function createService(config: Config, logger: Logger, options: ServiceOptions = {}) {
  const now = options.now ?? Date.now;
  const link = startNatsLink(
    {
      servers: config.natsServers,
      name: 'wasmcloud-metacontroller',
      connectOptions: natsSecurityOptions(config),
      retryDelayMs: options.natsRetryDelayMs,
    },
    logger.child({ component: 'nats' }),
  );
  const statuses = new StatusCache({
    connection: link.current,
    logger: logger.child({ component: 'status-cache' }),
    maxEntries: options.statusCacheEntries ?? 50_000,
    deployGraceMs: options.deployGraceMs ?? 10_000,
    now,
  });
  const metrics = new Metrics({ statusCacheSize: () => statuses.size, defaultMetrics: true });
  const client = new WadmClient({
    connection: link.current,
    apiPrefix: config.wadmApiPrefix,
    timeoutMs: config.wadmTimeoutMs,
    onRequest: (operation, outcome, ms) => {
      metrics.wadmRequests.inc({ operation, outcome });
      metrics.wadmDuration.observe({ operation }, ms / 1000);
    },
  });
  observeLink(link, statuses, metrics, config.defaultLattice);

  let stopping = false;
  const hooks = createHooks({
    lattice: new LatticeGateway(client, statuses),
    defaultLattice: config.defaultLattice,
    // Leave room for the last request's own timeout inside Metacontroller's.
    budgetMs: Math.max(1000, HOOK_TIMEOUT_MS - 1000 - config.wadmTimeoutMs),
    now,
    onRun: (_hook, run) => {
      for (const write of run.facts.writes) metrics.wadmWrites.inc({ operation: write.kind });
    },
  });
  const app = buildServer({
    hooks,
    logger,
    metrics,
    isReady: () => !stopping && link.isConnected(),
    bodyLimit: config.bodyLimitBytes,
  });

  return {
    app,
    link,
    statuses,
    metrics,
    /** Readiness drops first, calls in flight finish, then NATS is drained. */
    async shutdown(): Promise<void> {
      stopping = true;
      await app.close();
      await link.close();
    },
  };
}

export type Service = ReturnType<typeof createService>;

function observeLink(link: NatsLink, statuses: StatusCache, metrics: Metrics, defaultLattice: string): void {
  let connections = 0;
  link.onStateChange((connected) => metrics.natsConnected.set(connected ? 1 : 0));
  link.onReconnect(() => {
    // Status messages may have been missed while disconnected: ask wadm again.
    statuses.forget();
    statuses.watch(defaultLattice);
    if (connections++ > 0) metrics.natsReconnects.inc();
  });
}
