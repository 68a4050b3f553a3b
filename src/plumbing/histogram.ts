// A Prometheus histogram with one label, for a metric observed on every hook call. prom-client's
// observe() turns the bucket bound into a property name and hashes the labels on each call: ~3.5
// µs, the largest cost of ours in a settled resync (docs/benchmarks-history.md, second round of
// issue 15). This one keeps an array per label value and gives prom-client's registry the same
// series to print (test/unit/histogram.test.ts compares the two expositions).
import type { Metric, Registry } from 'prom-client';

interface Series {
  /** Observations per bucket (not cumulative), by index of the bound. */
  counts: number[];
  sum: number;
  count: number;
}

interface Value {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName: string;
}

export class LightHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelName: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Metric);
  }

  observe(labelValue: string, value: number): void {
    let series = this.series.get(labelValue);
    if (!series) this.series.set(labelValue, (series = { counts: this.bounds.map(() => 0), sum: 0, count: 0 }));
    const bucket = this.bounds.findIndex((bound) => value <= bound);
    if (bucket >= 0) series.counts[bucket]!++;
    series.sum += value;
    series.count++;
  }

  reset(): void {
    this.series.clear();
  }

  /** What the registry prints: bucket lines carry `le` first, then the label, as prom-client's do. */
  getForPromString() {
    const values: Value[] = [];
    for (const [labelValue, { counts, sum, count }] of this.series) {
      const shared = { [this.labelName]: labelValue };
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += counts[i]!;
        values.push({ labels: { le }, sharedLabels: shared, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: '+Inf' }, sharedLabels: shared, value: count, metricName: `${this.name}_bucket` });
      values.push({ labels: {}, sharedLabels: shared, value: sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: shared, value: count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The registry's JSON form (and prom-client's get()): each value with all its labels. */
  get() {
    const metric = this.getForPromString();
    const values = metric.values.map(({ labels, sharedLabels, value, metricName }) => ({
      labels: { ...labels, ...sharedLabels },
      value,
      metricName,
    }));
    return { ...metric, values };
  }
}
