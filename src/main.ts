// The process: read config, connect NATS in the background, serve hooks, shut down cleanly.
import { loadConfig } from './config.js';
import { createHooks } from './hooks.js';
import { startNatsLink } from './lattice/connection.js';
import { LatticeGateway } from './lattice/gateway.js';
import { StatusCache } from './lattice/status-cache.js';
import { WadmClient } from './lattice/wadm-client.js';
import { createLogger } from './logger.js';
import { Metrics } from './metrics.js';
import { buildServer } from './server.js';

const HOOK_TIMEOUT_MS = 10_000; // Metacontroller's default webhook timeout

const loaded = loadConfig(process.env);
if (!loaded.ok) {
  process.stderr.write(`wasmcloud-metacontroller: invalid configuration: ${loaded.errors.join('; ')}\n`);
  process.exit(1);
}
const config = loaded.config;
const logger = createLogger(config.logLevel);

const link = startNatsLink({ servers: config.natsServers, name: 'wasmcloud-metacontroller' }, logger.child({ component: 'nats' }));
const statuses = new StatusCache({
  connection: link.current,
  logger: logger.child({ component: 'status-cache' }),
  maxEntries: 50_000,
  deployGraceMs: 10_000,
  now: Date.now,
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

let shuttingDown = false;
link.onStateChange((connected) => metrics.natsConnected.set(connected ? 1 : 0));
link.onReconnect(() => {
  statuses.forget();
  statuses.watch(config.defaultLattice);
  metrics.natsReconnects.inc();
});

const hooks = createHooks({
  lattice: new LatticeGateway(client, statuses),
  defaultLattice: config.defaultLattice,
  // Leave room for the last request's own timeout inside Metacontroller's.
  budgetMs: Math.max(1000, HOOK_TIMEOUT_MS - 1000 - config.wadmTimeoutMs),
  now: Date.now,
  onRun: (_hook, run) => {
    for (const write of run.facts.writes) metrics.wadmWrites.inc({ operation: write.kind });
  },
});
const app = buildServer({
  hooks,
  logger,
  metrics,
  isReady: () => !shuttingDown && link.isConnected(),
  bodyLimit: config.bodyLimitBytes,
});

async function shutdown(signal: string): Promise<void> {
  if (shuttingDown) return;
  shuttingDown = true; // readiness drops first, so no new work is routed here
  logger.info({ signal }, 'shutting down: finishing hook calls in flight');
  await app.close(); // waits for requests in flight
  await link.close();
  logger.info('stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));

await app.listen({ port: config.port, host: config.host });
