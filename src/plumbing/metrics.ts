// Prometheus metrics. One registry per process (not prom-client's global), so tests can build
// several servers side by side.
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { Lru } from './lru.js';
import { LightHistogram } from './histogram.js';
import { VERSION } from './version.js';

const PREFIX = 'wasmcloud_metacontroller_';

/**
 * How long an application's phase counts after this replica last answered for it: five resync
 * periods of Metacontroller's default 60 s, so that an application answered by either of two
 * replicas stays counted by at least one (alerts take the max over replicas).
 */
export const PHASE_TTL_MS = 5 * 60_000;

export class Metrics {
  readonly registry = new Registry();

  // The three metrics of every hook call: the counters are plain numbers handed to prom-client
  // when it collects (a scrape), the durations a LightHistogram. prom-client's inc() and observe()
  // validate and hash the labels and allocate on each call, a measurable share of a settled
  // resync's cost (docs/benchmarks-history.md, second round of issue 15).
  private readonly hookCalls = new Tally();
  private readonly answerSources = new Tally();
  // The same for the metrics of every wadm request and write: a new application's call makes
  // three requests and two writes, and prom-client's label hashing was a visible share of the
  // cold path's CPU (docs/benchmarks-history.md, issue 39's cold path round).
  private readonly wadmRequestCounts = new Tally();
  private readonly wadmWriteCounts = new Tally();

  readonly hookRequests: Counter<'hook' | 'code'> = new Counter({
    name: `${PREFIX}hook_requests_total`,
    help: 'Hook calls by hook and HTTP outcome.',
    labelNames: ['hook', 'code'] as const,
    registers: [this.registry],
    collect: () => this.hookCalls.copyTo(this.hookRequests, (hook, code) => ({ hook, code })),
  });

  readonly hookDuration = new LightHistogram(
    `${PREFIX}hook_duration_seconds`,
    'Time to answer a hook call.',
    'hook',
    [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10],
    this.registry,
  );

  readonly wadmRequests: Counter<'operation' | 'outcome'> = new Counter({
    name: `${PREFIX}wadm_requests_total`,
    help: 'NATS requests to wadm by operation and outcome.',
    labelNames: ['operation', 'outcome'] as const,
    registers: [this.registry],
    collect: () => this.wadmRequestCounts.copyTo(this.wadmRequests, (operation, outcome) => ({ operation, outcome })),
  });

  readonly wadmDuration = new LightHistogram(
    `${PREFIX}wadm_request_duration_seconds`,
    'Latency of NATS requests to wadm.',
    'operation',
    [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 3, 5],
    this.registry,
  );

  readonly wadmWrites: Counter<'operation'> = new Counter({
    name: `${PREFIX}wadm_writes_total`,
    help: 'Changes made in wadm: versions put, deployed, undeployed, pruned, and applications deleted.',
    labelNames: ['operation'] as const,
    registers: [this.registry],
    collect: () => this.wadmWriteCounts.copyTo(this.wadmWrites, (operation) => ({ operation })),
  });

  readonly latticeChecks = new Counter({
    name: `${PREFIX}lattice_checks_total`,
    help: "Lists of a lattice's applications read to check what this replica remembers of wadm, by outcome: confirmed, contradicted (models read again), unlisted (the list could not be read).",
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly answers: Counter<'source'> = new Counter({
    name: `${PREFIX}hook_answers_total`,
    help: 'Hook answers by source: reused from memory (a settled application) or computed.',
    labelNames: ['source'] as const,
    registers: [this.registry],
    collect: () => this.answerSources.copyTo(this.answers, (source) => ({ source })),
  });

  /**
   * The last phase of each application this replica answered for, and when it last answered (a
   * reused answer too), bounded like the caches. Another replica may answer the next calls, the
   * finalize among them: a phase this replica has not confirmed for PHASE_TTL_MS is dropped, so
   * that the gauge never keeps an application that is gone or answered elsewhere.
   */
  private readonly phases = new Lru<string, { pair: { lattice: string; phase: string }; at: number }>(50_000);

  readonly applications = new Gauge({
    name: `${PREFIX}applications`,
    help: `Applications by phase and lattice, as this replica answered for them within the last ${PHASE_TTL_MS / 60_000} minutes.`,
    labelNames: ['lattice', 'phase'] as const,
    registers: [this.registry],
    collect: () => {
      this.applications.reset();
      const now = this.now();
      for (const key of [...this.phases.keys()]) {
        const { pair, at } = this.phases.get(key)!;
        if (now - at >= PHASE_TTL_MS) this.phases.delete(key);
        else this.applications.inc(pair);
      }
    },
  });

  readonly natsConnected = new Gauge({
    name: `${PREFIX}nats_connected`,
    help: '1 while connected to NATS.',
    registers: [this.registry],
  });

  readonly natsPermissionDenied = new Counter({
    name: `${PREFIX}nats_permission_denied_total`,
    help: "Requests (publish) and subscriptions (subscribe) NATS refused the service's user: a lattice outside its permissions (SECURITY.md).",
    labelNames: ['operation'] as const,
    registers: [this.registry],
  });

  readonly unhandledRejections = new Counter({
    name: `${PREFIX}unhandled_rejections_total`,
    help: 'Promise rejections nothing handled (a bug): logged at error and counted instead of ending the process.',
    registers: [this.registry],
  });

  readonly natsReconnects = new Counter({
    name: `${PREFIX}nats_reconnects_total`,
    help: 'NATS (re)connections after the first.',
    registers: [this.registry],
  });

  readonly memoryReclaims = new Counter({
    name: `${PREFIX}memory_reclaims_total`,
    help: 'Full collections the service asked for once a burst of hook calls was over, to give its memory back (needs node --expose-gc, as the image runs it).',
    registers: [this.registry],
  });

  /** Always 1; the labels say which build runs, so a dashboard can show a rollout's versions. */
  readonly buildInfo = new Gauge({
    name: `${PREFIX}build_info`,
    help: 'Version of wasmcloud-metacontroller and of Node.js this replica runs; always 1.',
    labelNames: ['version', 'node'] as const,
    registers: [this.registry],
  });

  /** A hook call answered with this HTTP status. */
  countHookCall(hook: string, code: string): void {
    this.hookCalls.add(hook, code);
  }

  /** A hook call's duration, by hook. */
  observeHookDuration(hook: string, seconds: number): void {
    this.hookDuration.observe(hook, seconds);
  }

  /** A NATS request sent to wadm, by what wadm (or NATS) answered, and how long that took. */
  countWadmRequest(operation: string, outcome: string, seconds: number): void {
    this.wadmRequestCounts.add(operation, outcome);
    this.wadmDuration.observe(operation, seconds);
  }

  /** A change wadm confirmed. */
  countWadmWrite(operation: string): void {
    this.wadmWriteCounts.add(operation, '');
  }

  /** Where a hook answer came from. */
  countAnswer(source: 'memory' | 'computed'): void {
    this.answerSources.add(source, '');
  }

  private readonly now: () => number;

  constructor(options: { defaultMetrics?: boolean; now?: () => number } = {}) {
    this.now = options.now ?? Date.now;
    if (options.defaultMetrics) collectDefaultMetrics({ register: this.registry, prefix: PREFIX });
    this.buildInfo.set({ version: VERSION, node: process.version }, 1);
  }

  /** One object per (lattice, phase) pair, shared by every application in it. */
  private readonly phasePairs = new Map<string, { lattice: string; phase: string }>();

  /** The application `owner` (`<namespace>/<name>`) is now in this phase; undefined: it is gone. */
  recordPhase(owner: string, lattice: string, phase: string | undefined): void {
    if (phase === undefined) return this.phases.delete(owner);
    const key = `${lattice}\n${phase}`;
    let pair = this.phasePairs.get(key);
    if (!pair) this.phasePairs.set(key, (pair = { lattice, phase }));
    this.phases.set(owner, { pair, at: this.now() });
  }

  /** This replica answered for the application again, from memory: its phase is unchanged and still true. */
  confirmPhase(owner: string): void {
    const entry = this.phases.get(owner);
    if (entry) entry.at = this.now();
  }

  readonly driftCorrections = new Counter({
    name: `${PREFIX}drift_corrections_total`,
    help: 'Deploys that undid a change made outside Kubernetes: another version deployed (other_version) or the application undeployed (undeployed).',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly moves = new Counter({
    name: `${PREFIX}moves_total`,
    help: 'Moves of applications to another lattice (spec.lattice changed): deployed in the new lattice (stage="deployed"), then cleaned from a former lattice once wadm reports it deployed in the new one (stage="retired").',
    labelNames: ['stage'] as const,
    registers: [this.registry],
  });

  readonly wadmSharedReads = new Counter({
    name: `${PREFIX}wadm_reads_shared_total`,
    help: 'wadm reads not sent because an identical one was in flight (singleflight).',
    labelNames: ['operation'] as const,
    registers: [this.registry],
  });

  readonly wadmLateReplies = new Counter({
    name: `${PREFIX}wadm_late_replies_total`,
    help: "wadm replies that came after the request timed out: wadm did the work, slower than WADM_TIMEOUT_MS or the hook call's time left allowed.",
    labelNames: ['operation'] as const,
    registers: [this.registry],
  });

  /** Lattices subscribed (status and events), read when Prometheus scrapes. */
  observeWatch(watched: () => number): void {
    new Gauge({
      name: `${PREFIX}lattices_watched`,
      help: 'Lattices whose wadm status and events this replica subscribes to: those a hook call used lately (idle ones are unsubscribed).',
      registers: [this.registry],
      collect() {
        this.set(watched());
      },
    });
  }

  /**
   * Hosts heartbeating per lattice this replica listens to (those a WasmCloudLattice asked about),
   * read when Prometheus scrapes; `alive` says which hosts still count.
   */
  observeHosts<H extends { heardAt: number }>(
    heard: () => Map<string, H[]>,
    now: () => number,
    alive: (host: H, now: number) => boolean = () => true,
  ): void {
    new Gauge({
      name: `${PREFIX}lattice_hosts`,
      help: 'Hosts heartbeating in each lattice whose heartbeats this replica listens to (those a WasmCloudLattice asked about lately).',
      labelNames: ['lattice'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        const at = now();
        for (const [lattice, hosts] of heard()) this.set({ lattice }, hosts.filter((host) => alive(host, at)).length);
      },
    });
  }

  /** Cache sizes, and the lattices whose last wadm answer is remembered, read when Prometheus scrapes. */
  observeCaches(caches: Record<'knowledge' | 'answers', { size: number; evictions: number }>, latticesAnswered: () => number): void {
    new Gauge({
      name: `${PREFIX}cache_entries`,
      help: "Entries held in memory: knowledge (what wadm said of each application), answers (each object's derived manifest and settled answer) and lattices (when each lattice's wadm last answered; those older than the liveness window are swept).",
      labelNames: ['cache'] as const,
      registers: [this.registry],
      collect() {
        for (const [cache, c] of Object.entries(caches)) this.set({ cache }, c.size);
        this.set({ cache: 'lattices' }, latticesAnswered());
      },
    });
    new Counter({
      name: `${PREFIX}cache_evictions_total`,
      help: 'Entries dropped because a cache was full (its bound is the number of applications it can hold).',
      labelNames: ['cache'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [cache, c] of Object.entries(caches)) this.inc({ cache }, c.evictions);
      },
    });
  }
}

/** Counts by one or two label values, as plain numbers until prom-client collects them. */
class Tally {
  private readonly counts = new Map<string, Map<string, number>>();

  add(first: string, second: string): void {
    let inner = this.counts.get(first);
    if (!inner) this.counts.set(first, (inner = new Map()));
    inner.set(second, (inner.get(second) ?? 0) + 1);
  }

  /** Sets the counter to these totals (they only grow, so the counter never goes down). */
  copyTo<L extends string>(counter: Counter<L>, labels: (first: string, second: string) => Partial<Record<L, string>>): void {
    counter.reset();
    for (const [first, inner] of this.counts) for (const [second, n] of inner) counter.inc(labels(first, second), n);
  }
}
