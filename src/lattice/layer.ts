// Wires everything NATS-side for the hooks: the wadm client, what this replica remembers of wadm
// (Knowledge) and the per-lattice subscriptions that keep it current.
import type { Logger } from 'pino';
import type { Config } from '../service/config.js';
import type { Metrics } from '../service/metrics.js';
import type { NatsLink } from './connection.js';
import { LatticeGateway } from './gateway.js';
import { Knowledge } from './knowledge.js';
import { WadmClient } from './wadm-client.js';
import { LatticeWatch } from './watch.js';

/**
 * Remembered facts of a lattice are used only while its wadm answered a request within this
 * window; past it, one probe (shared by every application of the lattice) asks first. So a wadm
 * that stops answering shows in a settled application's status at its next resync at the latest.
 */
export const LIVENESS_MS = 5_000;

export interface LatticeOptions {
  /** See Knowledge: how long after our deploy an older status is not trusted. */
  deployGraceMs?: number;
}

export function createLatticeLayer(deps: { config: Config; link: NatsLink; logger: Logger; metrics: Metrics; now: () => number; options: LatticeOptions }) {
  const { config, link, logger, metrics, now, options } = deps;
  const knowledge = new Knowledge({
    capacity: config.cacheEntries,
    modelTtlMs: config.modelCacheTtlSeconds * 1000,
    deployGraceMs: options.deployGraceMs ?? 10_000,
    livenessMs: LIVENESS_MS,
    now,
  });
  const watch = new LatticeWatch(link.current, knowledge, logger.child({ component: 'lattice-watch' }));
  const client = new WadmClient({
    connection: link.current,
    apiPrefix: config.wadmApiPrefix,
    timeoutMs: config.wadmTimeoutMs,
    onRequest: (lattice, operation, outcome, ms) => {
      if (outcome === 'ok') knowledge.answered(lattice);
      metrics.wadmRequests.inc({ operation, outcome });
      metrics.wadmDuration.observe({ operation }, ms / 1000);
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
    watch.watch(config.defaultLattice);
    if (connections++ > 0) metrics.natsReconnects.inc();
  });
  return { gateway: new LatticeGateway(client, knowledge, watch, link.isConnected), knowledge, client };
}
