// Wires the service from its configuration: NATS link, wadm client, status cache, hooks and the
// HTTP app. main.ts runs it as a process; tests run it in-process against real servers.
import type { Logger } from 'pino';
import { bearerAuthorizer } from '../http/auth.js';
import type { Config } from './config.js';
import type { Write } from '../core/facts.js';
import { createHooks } from '../http/hooks.js';
import { watchedFiles } from './files.js';
import { startNatsLink } from '../lattice/connection.js';
import { createLatticeLayer, type LatticeOptions } from '../lattice/layer.js';
import { natsSecurityOptions } from '../lattice/nats-auth.js';
import { Metrics } from './metrics.js';
import { buildServer } from '../http/server.js';

const HOOK_TIMEOUT_MS = 10_000; // Metacontroller's default webhook timeout

export interface ServiceOptions extends LatticeOptions {
  now?: () => number;
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
  const metrics = new Metrics({ defaultMetrics: true });
  const lattice = createLatticeLayer({ config, link, logger, metrics, now, options });
  metrics.observeCaches({ status: lattice.statuses, model: lattice.models });

  const files = watchedFiles(config, logger.child({ component: 'files' }), options.fileCheckIntervalMs);
  let stopping = false;
  const hooks = createHooks({
    lattice: lattice.gateway,
    tenancy: files.tenancy,
    // Leave room for the last request's own timeout inside Metacontroller's.
    budgetMs: Math.max(1000, HOOK_TIMEOUT_MS - 1000 - config.wadmTimeoutMs),
    now,
    onRun: (hook, run, prepared) => {
      for (const write of run.facts.writes) metrics.wadmWrites.inc({ operation: writeOperation(write) });
      const uid = `${prepared.ref.namespace}/${prepared.ref.name}`;
      // A finalized application is gone: it no longer counts in any phase.
      metrics.recordPhase(uid, prepared.lattice, hook === 'finalize' && run.response.finalized ? undefined : run.response.status.phase);
    },
    onAnswer: (source) => metrics.answers.inc({ source }),
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
    hooks,
    link,
    statuses: lattice.statuses,
    models: lattice.models,
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

function writeOperation(write: Write): string {
  if (write.kind === 'delete') return write.version === null ? 'delete' : 'prune';
  return write.kind;
}
