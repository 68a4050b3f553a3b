// Wires everything NATS-side for the hooks: the wadm client, the caches that make a settled
// resync free (model facts, statuses) and the per-lattice subscriptions that keep them current.
import type { Logger } from 'pino';
import type { Config } from '../service/config.js';
import type { Metrics } from '../service/metrics.js';
import type { NatsLink } from './connection.js';
import { LatticeGateway } from './gateway.js';
import { LatticeWatch } from './watch.js';
import { ModelCache } from './model-cache.js';
import { StatusCache } from './status-cache.js';
import { WadmClient } from './wadm-client.js';

export interface LatticeOptions {
  /** See StatusCache: how long after our deploy an older status is not trusted. */
  deployGraceMs?: number;
  /** Applications whose model and status are kept in memory. */
  cacheEntries?: number;
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
  const entries = options.cacheEntries ?? 50_000;
  const statuses = new StatusCache({ maxEntries: entries, deployGraceMs: options.deployGraceMs ?? 10_000, now });
  const models = new ModelCache(config.modelCacheTtlSeconds * 1000, entries, now);
  const watch = new LatticeWatch(link.current, [statuses.feed(), models.feed()], logger.child({ component: 'lattice-watch' }));
  const client = new WadmClient({
    connection: link.current,
    apiPrefix: config.wadmApiPrefix,
    timeoutMs: config.wadmTimeoutMs,
    onRequest: (operation, outcome, ms) => {
      metrics.wadmRequests.inc({ operation, outcome });
      metrics.wadmDuration.observe({ operation }, ms / 1000);
    },
  });

  let connections = 0;
  link.onStateChange((connected) => metrics.natsConnected.set(connected ? 1 : 0));
  link.onReconnect(() => {
    // Messages may have been missed while disconnected: ask wadm again.
    statuses.forget();
    models.clear();
    watch.watch(config.defaultLattice);
    if (connections++ > 0) metrics.natsReconnects.inc();
  });
  return { gateway: new LatticeGateway(client, statuses, models, watch), statuses, models, client };
}
