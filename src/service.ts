// Wires the service from its configuration: NATS link, wadm client, status cache, hooks and the
// HTTP app. main.ts runs it as a process; tests run it in-process against real servers.
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { bearerAuthorizer, parseToken } from './auth.js';
import type { Config } from './config.js';
import { createHooks } from './hooks.js';
import { startNatsLink, type NatsLink } from './lattice/connection.js';
import { LatticeGateway } from './lattice/gateway.js';
import { natsSecurityOptions } from './lattice/nats-auth.js';
import { StatusCache } from './lattice/status-cache.js';
import { WadmClient } from './lattice/wadm-client.js';
import { Metrics } from './metrics.js';
import { buildServer } from './server.js';
import { defaultOnly, fromPolicy, parsePolicy, type Tenancy } from './tenancy.js';
import { WatchedFile } from './watched-file.js';

const HOOK_TIMEOUT_MS = 10_000; // Metacontroller's default webhook timeout

export interface ServiceOptions {
  now?: () => number;
  /** See StatusCache: how long after our deploy an older status is not trusted. */
  deployGraceMs?: number;
  statusCacheEntries?: number;
  natsRetryDelayMs?: number;
  /** How often watched files (policy, token, certificate) are checked for changes. */
  fileCheckIntervalMs?: number;
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

  const files = watchedFiles(config, logger.child({ component: 'files' }), options.fileCheckIntervalMs);
  let stopping = false;
  const hooks = createHooks({
    lattice: new LatticeGateway(client, statuses),
    tenancy: files.tenancy,
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
    maxConcurrentHooks: config.maxConcurrentHooks,
    ...(files.token ? { authorize: bearerAuthorizer(() => files.token!.current()) } : {}),
    ...(files.tls ? { https: files.tls.current() } : {}),
  });
  // cert-manager renews certificates in place: swap the TLS context without a restart.
  files.tls?.onChange((tls) => (app.server as unknown as { setSecureContext(options: object): void }).setSecureContext(tls));

  return {
    app,
    link,
    statuses,
    metrics,
    /** Readiness drops first, calls in flight finish, then NATS is drained. */
    async shutdown(delayMs = 0): Promise<void> {
      stopping = true;
      // Keep serving while Kubernetes takes the pod out of the Service's endpoints.
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      await app.close();
      await link.close();
      files.close();
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

/** The files the service reads and re-reads: lattice policy, bearer token, TLS certificate. */
function watchedFiles(config: Config, logger: Logger, intervalMs = 2000) {
  const tenancy: Tenancy = config.latticePolicyFile
    ? delegate(new WatchedFile(config.latticePolicyFile, (text) => fromPolicy(parsePolicy(text), config.defaultLattice), logger, undefined, intervalMs), config.defaultLattice)
    : defaultOnly(config.defaultLattice);
  const token = config.hookBearerTokenFile ? new WatchedFile(config.hookBearerTokenFile, parseToken, logger, undefined, intervalMs) : undefined;
  const tls = config.tlsCertFile && config.tlsKeyFile ? watchedTls(config.tlsCertFile, config.tlsKeyFile, logger, intervalMs) : undefined;
  return {
    tenancy,
    token,
    tls,
    close() {
      (tenancy as Partial<{ close(): void }>).close?.();
      token?.close();
      tls?.close();
    },
  };
}

function delegate(file: WatchedFile<Tenancy>, defaultLattice: string): Tenancy & { close(): void } {
  return { defaultLattice, allows: (namespace, lattice) => file.current().allows(namespace, lattice), close: () => file.close() };
}

/** Key and certificate change together; either file changing reloads both. */
function watchedTls(certFile: string, keyFile: string, logger: Logger, intervalMs: number) {
  const read = () => ({ cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') });
  const listeners: ((tls: { cert: string; key: string }) => void)[] = [];
  const notify = () => {
    try {
      const tls = read();
      for (const listener of listeners) listener(tls);
    } catch (err) {
      logger.error({ err: (err as Error).message }, 'cannot reload the TLS certificate; keeping the previous one');
    }
  };
  const files = [certFile, keyFile].map((path) => new WatchedFile(path, (t) => t, logger, notify, intervalMs));
  return {
    current: read,
    onChange: (listener: (tls: { cert: string; key: string }) => void) => void listeners.push(listener),
    close: () => files.forEach((f) => f.close()),
  };
}
