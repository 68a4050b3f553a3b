// The HTTP tier, in-process: the Fastify app of src/server.ts around the real hooks (src/sync.ts),
// against an in-memory lattice unless the test brings its own, its log lines parsed. Driven with app.inject or
// on a loopback port; closed when the test ends. The whole service (NATS included) is service.ts.
import { createHooks, type HookDeps, type Hooks, type Lattice } from '../../src/sync.js';
import { buildServer } from '../../src/server.js';
import { createLatticeHook, type LatticeHookDeps } from '../../src/lattice/lattice-hook.js';
import { defaultOnly } from '../../src/core/tenancy.js';
import { createLogger } from '../../src/plumbing/logger.js';
import { Metrics } from '../../src/plumbing/metrics.js';
import { TEST_EPOCH } from './clock.js';
import { jsonLogSink, type LogLine } from './logs.js';
import { MemoryLattice } from './memory-lattice.js';
import type { Cleanups } from './service.js';

export interface TestHooksOptions extends Partial<Omit<HookDeps, 'lattice'>> {}

/** createHooks with the tests' defaults: lattice `default` only, a 5 s budget, the test epoch, 1000 cached objects. */
export function testHooks(lattice: Lattice, options: TestHooksOptions = {}): Hooks {
  return createHooks({ tenancy: defaultOnly('default'), budgetMs: 5000, now: () => TEST_EPOCH, cacheEntries: 1000, ...options, lattice });
}

export interface BuildOptions extends Omit<TestHooksOptions, 'now'> {
  lattice?: Lattice;
  /** The test's clock, for the hooks (default: the test epoch) and the pacing of rejection log lines (default: the wall clock). */
  now?: () => number;
  ready?: boolean;
  /** What wiring/readiness.ts would say; default: from `ready`, hooks answered either way. */
  readiness?: () => { ready: boolean; answersHooks: boolean; reason?: string };
  bodyLimit?: number;
  maxConcurrentHooks?: number;
  hookBytesInFlight?: number;
  authorize?: (header: string | undefined) => boolean;
  requestTimeoutMs?: number;
  /** Default debug: every line the service could write. */
  logLevel?: string;
  /** Each log line goes here instead of into `lines` (a long run keeps nothing). */
  onLog?: (line: LogLine) => void;
  /** What the WasmCloudLattice's hook knows of its lattices; default: no NATS (nothing heard, wadm unavailable). */
  latticeViews?: Pick<LatticeHookDeps, 'hosts' | 'listings'>;
}

/** A lattice hook's knowledge without NATS. */
const NO_NATS: Pick<LatticeHookDeps, 'hosts' | 'listings'> = {
  hosts: { view: () => ({ watching: false, why: 'disconnected', message: 'not connected to NATS' }) },
  listings: { view: async () => ({ kind: 'unavailable', reason: 'Disconnected', message: 'not connected to NATS' }) },
};

export function build(t: Cleanups, options: BuildOptions = {}) {
  const {
    lattice = new MemoryLattice(),
    now,
    ready = true,
    readiness,
    bodyLimit = 16 * 1024 * 1024,
    maxConcurrentHooks = 64,
    hookBytesInFlight,
    authorize,
    requestTimeoutMs,
    logLevel = 'debug',
    onLog,
    latticeViews = NO_NATS,
    ...hooks
  } = options;
  const { sink, lines } = jsonLogSink(onLog);
  const metrics = new Metrics();
  const app = buildServer({
    hooks: testHooks(lattice, { ...hooks, ...(now ? { now } : {}) }),
    latticeHook: createLatticeHook({
      ...latticeViews,
      tenancy: hooks.tenancy ?? defaultOnly('default'),
      now: now ?? (() => TEST_EPOCH),
      budgetMs: 5000,
    }),
    logger: createLogger(logLevel, sink),
    metrics,
    readiness:
      readiness ??
      (() => (ready ? { ready: true, answersHooks: true } : { ready: false, answersHooks: true, reason: 'not connected to NATS' })),
    natsConnected: () => ready,
    bodyLimit,
    maxConcurrentHooks,
    ...(hookBytesInFlight ? { hookBytesInFlight } : {}),
    ...(now ? { now } : {}),
    ...(authorize ? { authorize } : {}),
    ...(requestTimeoutMs ? { requestTimeoutMs } : {}),
  });
  t.after(() => app.close());
  return { app, lattice, lines, metrics };
}
