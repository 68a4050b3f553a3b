// Wires the service from its configuration: NATS link, the lattice layer, hooks, metrics and the
// HTTP app. src/main.ts runs it as a process; tests run it in-process against real servers.
import { getHeapStatistics } from 'node:v8';
import type { Logger } from 'pino';
import { bearerAuthorizer } from '../http/auth.js';
import type { Config } from '../plumbing/config.js';
import { createHooks } from '../sync.js';
import { writeOperation } from '../core/steps.js';
import { watchedFiles } from './files.js';
import { replicaReadiness } from './readiness.js';
import { startNatsLink } from '../lattice/connection.js';
import { createLatticeLayer, type LatticeOptions } from './lattice.js';
import { createLatticeHook } from '../lattice/lattice-hook.js';
import { natsSecurityOptions } from '../lattice/nats-auth.js';
import { MemoryReclaimer, RECLAIM_CHECK_MS, runtimeReclaimDeps, type ReclaimDeps } from '../plumbing/memory-reclaim.js';
import { Metrics } from '../plumbing/metrics.js';
import { buildServer } from '../server.js';

/** What a hook call leaves of Metacontroller's timeout for its answer to travel back. */
const ANSWER_MARGIN_MS = 1000;

export interface ServiceOptions extends LatticeOptions {
  now?: () => number;
  natsRetryDelayMs?: number;
  /** How often watched files (policy, token, certificate) are checked for changes. */
  fileCheckIntervalMs?: number;
  /** How often a replica cut off from NATS asks its peers (wiring/readiness.ts). */
  peerCheckMs?: number;
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
  const metrics = new Metrics({ defaultMetrics: true, now });
  const lattice = createLatticeLayer({ config, link, logger, metrics, now, options });
  const hookLattice = {
    perform: lattice.gateway.perform.bind(lattice.gateway),
    knowledge: lattice.knowledge,
    maxPayloadBytes: () => link.current()?.info?.max_payload,
  };

  const files = watchedFiles(config, logger.child({ component: 'files' }), options.fileCheckIntervalMs);
  const readiness = replicaReadiness({
    graceMs: config.natsOutageGraceMs,
    peers: config.peers,
    tls: config.tlsCertFile !== undefined,
    now,
    isConnected: link.isConnected,
    onStateChange: link.onStateChange,
    logger: logger.child({ component: 'readiness' }),
    ...(options.peerCheckMs !== undefined ? { peerCheckMs: options.peerCheckMs } : {}),
  });
  const reclaimer = reclaimAfterBursts(runtimeReclaimDeps(), metrics, logger);
  const hooks = createHooks({
    lattice: hookLattice,
    tenancy: files.tenancy,
    // Every wait of a call is cut to this budget (plumbing/deadline.ts): it ends within Metacontroller's timeout.
    budgetMs: config.hookTimeoutMs - ANSWER_MARGIN_MS,
    now,
    cacheEntries: config.cacheEntries,
    deployGraceMs: options.deployGraceMs,
    onRun: (hook, run) => {
      // Only what wadm confirmed: a write that failed is logged at warn and counted nowhere.
      for (const write of run.facts.writes) {
        metrics.countWadmWrite(writeOperation(write));
        if (write.kind === 'deploy' && write.replacing)
          metrics.driftCorrections.inc({ kind: write.replacing.deployed === null ? 'undeployed' : 'other_version' });
        if (write.kind === 'deploy' && write.moving !== undefined) metrics.moves.inc({ stage: 'deployed' });
        // A former lattice cleaned at sync completes a move; at finalize it is part of the delete.
        if (hook === 'sync' && write.lattice !== undefined) metrics.moves.inc({ stage: 'retired' });
      }
      // `owner` is `<namespace>/<name>`: the string the application already holds, not one more per application.
      const { owner, lattice: latticeName } = run.call.app;
      // A finalized application is gone: it no longer counts in any phase.
      metrics.recordPhase(owner, latticeName, hook === 'finalize' && run.response.finalized ? undefined : run.response.status.phase);
    },
    onAnswer: (source) => {
      metrics.countAnswer(source);
      reclaimer?.noteCall();
    },
    onReused: (app) => metrics.confirmPhase(app.owner),
  });
  metrics.observeCaches({ knowledge: lattice.knowledge, answers: hooks.answers }, () => lattice.knowledge.latticesAnswered);
  const latticeHook = createLatticeHook({
    hosts: lattice.hosts,
    listings: lattice.listings,
    tenancy: files.tenancy,
    now,
    budgetMs: config.hookTimeoutMs - ANSWER_MARGIN_MS,
  });
  const app = buildServer({
    hooks,
    latticeHook,
    logger,
    metrics,
    readiness: readiness.state,
    natsConnected: link.isConnected,
    bodyLimit: config.bodyLimitBytes,
    maxConcurrentHooks: config.maxConcurrentHooks,
    hookBytesInFlight: hookBytesInFlight(config),
    ...(files.token ? { authorize: bearerAuthorizer(() => files.token!.current()) } : {}),
    ...(files.tls ? { https: files.tls.current() } : {}),
  });
  // cert-manager renews certificates in place: swap the TLS context without a restart.
  files.tls?.onChange((tls) => (app.server as unknown as { setSecureContext(options: object): void }).setSecureContext(tls));

  return {
    app,
    hooks,
    latticeHook,
    hosts: lattice.hosts,
    link,
    knowledge: lattice.knowledge,
    metrics,
    /** Readiness drops first, calls in flight finish, then NATS is drained. */
    async shutdown(delayMs = 0): Promise<void> {
      readiness.stop();
      // Keep serving while Kubernetes takes the pod out of the Service's endpoints.
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      await app.close();
      await link.close();
      files.close();
      reclaimer?.stop();
    },
  };
}

export type Service = ReturnType<typeof createService>;

/** Checks every RECLAIM_CHECK_MS whether a burst of calls is over and its memory can go back. */
function reclaimAfterBursts(deps: ReclaimDeps | undefined, metrics: Metrics, logger: Logger) {
  if (!deps) return undefined;
  const reclaimer = new MemoryReclaimer(deps);
  const timer = setInterval(() => {
    const reclaimed = reclaimer.check();
    if (!reclaimed) return;
    metrics.memoryReclaims.inc();
    logger.debug({ rssBeforeBytes: reclaimed.before, rssAfterBytes: reclaimed.after }, 'calls stopped: memory of the burst given back');
  }, RECLAIM_CHECK_MS).unref();
  return { noteCall: () => reclaimer.noteCall(), stop: () => clearInterval(timer) };
}

/** The bound on hook bodies in flight this service runs with: HOOK_BYTES_IN_FLIGHT, else the default. */
export function hookBytesInFlight(config: Config): number {
  return config.hookBytesInFlight ?? defaultHookBytesInFlight();
}

/**
 * HOOK_BYTES_IN_FLIGHT unset: an eighth of V8's heap limit, which Node sizes from the container's
 * memory limit (259 MiB under the Deployment's 512Mi: ~32 MiB, two 16 MiB bodies at once; four
 * exhausted the heap).
 */
export function defaultHookBytesInFlight(heapLimit = getHeapStatistics().heap_size_limit): number {
  return Math.floor(heapLimit / 8);
}
