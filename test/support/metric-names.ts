// The metric names the service exposes, as a scrape sees them: what alerts, dashboards and docs
// may name. Histograms add _bucket, _count and _sum to their family's name.
import { Metrics } from '../../src/plumbing/metrics.js';

export const METRIC_PREFIX = 'wasmcloud_metacontroller_';

/** The families of a running replica; with `defaultMetrics`, its process and Node.js metrics too. */
export async function metricFamilies(defaultMetrics = true): Promise<{ name: string; histogram: boolean }[]> {
  const metrics = new Metrics({ defaultMetrics });
  // The gauges that exist once the service has its caches and lattice watch.
  metrics.observeCaches({ knowledge: { size: 0, evictions: 0 }, answers: { size: 0, evictions: 0 } }, () => 0);
  metrics.observeWatch(() => 0);
  metrics.observeHosts(
    () => new Map([['default', []]]),
    () => 0,
  );
  const families = await metrics.registry.getMetricsAsJSON();
  return families.map((f) => ({ name: f.name, histogram: String(f.type) === 'histogram' }));
}

/** Every series name a scrape of one replica shows. */
export async function exposedSeries(): Promise<Set<string>> {
  const families = await metricFamilies();
  return new Set(families.flatMap((f) => (f.histogram ? ['_bucket', '_count', '_sum'].map((s) => f.name + s) : [f.name])));
}
