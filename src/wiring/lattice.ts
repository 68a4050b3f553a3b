// Wires everything NATS-side for the hooks: the wadm client, what this replica remembers of wadm
// (Knowledge) and the per-lattice subscriptions that keep it current.
import type { Logger } from 'pino';
import { DEPLOY_GRACE_MS } from '../core/evidence.js';
import { DEFAULT_HEARTBEAT_MS, expiresAt } from '../core/lattice-hosts.js';
import type { Config } from '../plumbing/config.js';
import type { Metrics } from '../plumbing/metrics.js';
import type { NatsLink } from '../lattice/connection.js';
import { LatticeCensus } from '../lattice/census.js';
import { LatticeGateway } from '../lattice/gateway.js';
import { HostRegistry } from '../lattice/hosts.js';
import { LatticeListings } from '../lattice/listings.js';
import { Knowledge } from '../lattice/knowledge.js';
import { WadmClient } from '../lattice/wadm-client.js';
import { LatticeWatch } from '../lattice/watch.js';

/**
 * Remembered facts of a lattice are used only while its wadm answered a request within this
 * window; past it, one probe (shared by every application of the lattice) asks first. So a wadm
 * that stops answering shows in a settled application's status at its next resync at the latest.
 */
export const LIVENESS_MS = 5_000;

/**
 * A lattice no hook call used for this long is unsubscribed. Every application reads its model at
 * least once per MODEL_CACHE_TTL_SECONDS plus Metacontroller's resync period, so a lattice with
 * applications stays watched; at least 15 minutes, so that a quiet one is not churned.
 */
function watchIdleMs(modelTtlMs: number): number {
  return Math.max(15 * 60_000, 3 * modelTtlMs);
}

/** A refused or failed subscription is tried again after this long (and logged again then). */
const WATCH_RETRY_MS = 5 * 60_000;

/**
 * A remembered model is used only while it was read, or its lattice listed, within this time:
 * Metacontroller's resyncPeriodSeconds for settled objects, so that wadm's lost store is noticed
 * within one resync period (lattice/census.ts).
 */
export const CHECK_PERIOD_MS = 60_000;

/** A lattice whose list timed out (too large for one NATS message) is listed again after this long. */
const UNLISTED_RETRY_MS = 10 * CHECK_PERIOD_MS;

/** How often wasmCloud 1.x hosts heartbeat; a host's own heartbeats say otherwise once two are heard. */
export const HOST_HEARTBEAT_MS = DEFAULT_HEARTBEAT_MS;

/** Lattices whose hosts are heard at once (each has at most MAX_HOSTS_PER_LATTICE hosts kept). */
const MAX_HOST_LATTICES = 256;
const MAX_HOSTS_PER_LATTICE = 2000;

export interface LatticeOptions {
  /** How long after a deploy an older status is not trusted without evidence (core/evidence.ts). */
  deployGraceMs?: number;
  /** How often the hosts heartbeat until they show otherwise (HOST_HEARTBEAT_MS); tests run faster hosts. */
  hostHeartbeatMs?: number;
  /** How old a lattice's list may be before a WasmCloudLattice reads it again (CHECK_PERIOD_MS); tests shorten it. */
  latticeListPeriodMs?: number;
}

export function createLatticeLayer(deps: {
  config: Config;
  link: NatsLink;
  logger: Logger;
  metrics: Metrics;
  now: () => number;
  options: LatticeOptions;
}) {
  const { config, link, logger, metrics, now, options } = deps;
  const knowledge = new Knowledge({
    capacity: config.cacheEntries,
    modelTtlMs: config.modelCacheTtlSeconds * 1000,
    deployGraceMs: options.deployGraceMs ?? DEPLOY_GRACE_MS,
    livenessMs: LIVENESS_MS,
    checkPeriodMs: CHECK_PERIOD_MS,
    now,
  });
  const log = logger.child({ component: 'lattice-watch' });
  const watch = new LatticeWatch(link.current, knowledge, log, {
    now,
    idleMs: watchIdleMs(config.modelCacheTtlSeconds * 1000),
    retryFailedMs: WATCH_RETRY_MS,
    onFailure: (_lattice, denied) => {
      if (denied) metrics.natsPermissionDenied.inc({ operation: 'subscribe' });
    },
  });
  metrics.observeWatch(() => watch.size);
  const client = new WadmClient({
    connection: link.current,
    apiPrefix: config.wadmApiPrefix,
    timeoutMs: config.wadmTimeoutMs,
    onRequest: (lattice, operation, outcome, ms) => {
      if (outcome === 'ok') knowledge.answered(lattice);
      if (outcome === 'permission_denied') metrics.natsPermissionDenied.inc({ operation: 'publish' });
      metrics.countWadmRequest(operation, outcome, ms / 1000);
    },
    // A late answer is still an answer: what is remembered of the lattice stays usable, as after
    // a probe that waited behind it (gateway.ts confirmAlive).
    onLateReply: (lattice, operation) => {
      knowledge.answered(lattice);
      metrics.wadmLateReplies.inc({ operation });
    },
    onShared: (operation) => metrics.wadmSharedReads.inc({ operation }),
  });

  let connections = 0;
  link.onStateChange((connected) => {
    metrics.natsConnected.set(connected ? 1 : 0);
    // Either way, what we remember may be stale: messages may have been missed.
    knowledge.reset();
  });
  link.onReconnect(() => {
    knowledge.reset();
    watch.resubscribe();
    watch.watch(config.defaultLattice);
    if (connections++ > 0) metrics.natsReconnects.inc();
  });
  // A lattice whose index key the service may not read through its prefix lattice: said once per
  // process and lattice (each first put there then reads the lattice's whole list instead).
  const refusedKeyReads = new Set<string>();
  const onKeyReadRefused = (lattice: string, message: string) => {
    if (refusedKeyReads.has(lattice) || refusedKeyReads.size >= 1000) return;
    refusedKeyReads.add(lattice);
    logger.warn(
      { lattice, err: message },
      `checking lattice "${lattice}"'s index key through its own list of applications, which grows with it (SECURITY.md)`,
    );
  };
  // A lattice whose list could not be read: said once per process, lattice and reason (a timeout
  // keeps it unlisted for UNLISTED_RETRY_MS; its models are then read one by one each period).
  const unlisted = new Set<string>();
  // The census reads each lattice's whole list: the WasmCloudLattices' listings keep what they show of it.
  const listed: { to?: LatticeListings } = {};
  const census = new LatticeCensus(knowledge, {
    onListed: (lattice, at, models) => listed.to?.listed(lattice, at, models),
    list: (lattice) => client.list(lattice),
    now,
    wadmTimeoutMs: config.wadmTimeoutMs,
    unlistedRetryMs: UNLISTED_RETRY_MS,
    failedRetryMs: CHECK_PERIOD_MS,
    onCheck: (lattice, outcome, detail) => {
      metrics.latticeChecks.inc({ outcome });
      if ('forgotten' in detail && detail.forgotten > 0)
        logger.warn(
          { lattice, applications: detail.forgotten },
          `wadm's list of lattice "${lattice}" contradicts what this replica remembers of ${detail.forgotten} application(s) (changed outside Kubernetes, or wadm lost its store): reading them again`,
        );
      if (!('error' in detail)) return;
      const said = `${detail.error.reason} ${lattice}`;
      if (unlisted.has(said) || unlisted.size >= 1000) return;
      unlisted.add(said);
      logger.warn(
        { lattice, reason: detail.error.reason, err: detail.error.message },
        `could not list lattice "${lattice}" (${detail.error.reason}; wadm cannot send a list past NATS's max_payload, which then times out): each of its applications reads its own model once per resync period instead`,
      );
    },
  });
  const hosts = new HostRegistry(link.current, logger.child({ component: 'lattice-hosts' }), {
    now,
    defaultPeriodMs: options.hostHeartbeatMs ?? HOST_HEARTBEAT_MS,
    idleMs: watchIdleMs(config.modelCacheTtlSeconds * 1000),
    retryFailedMs: WATCH_RETRY_MS,
    maxHostsPerLattice: MAX_HOSTS_PER_LATTICE,
    maxLattices: MAX_HOST_LATTICES,
    onFailure: (_lattice, denied) => {
      if (denied) metrics.natsPermissionDenied.inc({ operation: 'subscribe' });
    },
  });
  link.onReconnect(() => hosts.resubscribe());
  const heartbeatMs = options.hostHeartbeatMs ?? HOST_HEARTBEAT_MS;
  metrics.observeHosts(
    () => hosts.counts(),
    now,
    (host, at) => expiresAt(host, heartbeatMs) > at,
  );
  const listings = new LatticeListings(census, client, {
    now,
    periodMs: options.latticeListPeriodMs ?? CHECK_PERIOD_MS,
    ownerTtlMs: config.modelCacheTtlSeconds * 1000,
    maxLattices: MAX_HOST_LATTICES,
    isConnected: link.isConnected,
  });
  listed.to = listings;
  const gateway = new LatticeGateway(client, knowledge, watch, census, link.isConnected, onKeyReadRefused, hosts);
  return { gateway, knowledge, client, watch, hosts, listings };
}
