// Prometheus metrics. One registry per process (not prom-client's global), so tests can build
// several servers side by side.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

const PREFIX = 'wasmcloud_metacontroller_';

export class Metrics {
  readonly registry = new Registry();

  readonly hookRequests = new Counter({
    name: `${PREFIX}hook_requests_total`,
    help: 'Hook calls by hook and HTTP outcome.',
    labelNames: ['hook', 'code'] as const,
    registers: [this.registry],
  });

  readonly hookDuration = new Histogram({
    name: `${PREFIX}hook_duration_seconds`,
    help: 'Time to answer a hook call.',
    labelNames: ['hook'] as const,
    buckets: [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly wadmRequests = new Counter({
    name: `${PREFIX}wadm_requests_total`,
    help: 'NATS requests to wadm by operation and outcome.',
    labelNames: ['operation', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly wadmDuration = new Histogram({
    name: `${PREFIX}wadm_request_duration_seconds`,
    help: 'Latency of NATS requests to wadm.',
    labelNames: ['operation'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 3, 5],
    registers: [this.registry],
  });

  readonly wadmWrites = new Counter({
    name: `${PREFIX}wadm_writes_total`,
    help: 'Versions put, deployed, undeployed and deleted (prune or finalize).',
    labelNames: ['operation'] as const,
    registers: [this.registry],
  });

  readonly natsConnected = new Gauge({
    name: `${PREFIX}nats_connected`,
    help: '1 while connected to NATS.',
    registers: [this.registry],
  });

  readonly natsReconnects = new Counter({
    name: `${PREFIX}nats_reconnects_total`,
    help: 'NATS (re)connections after the first.',
    registers: [this.registry],
  });

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics) collectDefaultMetrics({ register: this.registry, prefix: PREFIX });
  }

  /** Cache sizes, read when Prometheus scrapes. */
  observeCaches(sizes: { statuses: () => number; models: () => number }): void {
    new Gauge({
      name: `${PREFIX}cache_entries`,
      help: 'Applications whose wadm status or model is held in memory.',
      labelNames: ['cache'] as const,
      registers: [this.registry],
      collect() {
        this.set({ cache: 'status' }, sizes.statuses());
        this.set({ cache: 'model' }, sizes.models());
      },
    });
  }
}
