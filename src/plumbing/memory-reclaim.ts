// Gives memory back to the system once a burst of hook calls is over.
//
// V8 returns the memory a burst grew (the young generation, and on Node 24 the freed pages it pools
// for reuse) only at a memory-reducing full collection. Its memory reducer starts one when the
// process looks idle, but in a Node server it keeps judging the allocation rate from the burst
// ("high alloc, foreground" under --trace-memory-reducer) and never does: on the image's Node 24 a
// replica that answered 10,000 applications stayed at ~296 MiB for good
// (docs/benchmarks-history.md, third round of issue 15). V8's --memory-saver-mode would fix that
// at 3× the CPU per large call, a smaller young generation at 6–30 % of the large-call throughput.
// So the service asks for that collection itself, once, when calls have stopped and the RSS has
// grown. On Node 24 its start is such a burst too (modules, schemas, the NATS connection): it
// leaves the young generation at 16 MiB, ~10 MiB of idle RSS that the first quiet period gives
// back.
import { memoryUsage } from 'node:process';

export interface ReclaimDeps {
  /** A full, memory-reducing collection. */
  collect(): void;
  residentBytes(): number;
  /** Check periods in a row without a call before collecting: how long the runtime needs calls to have stopped. */
  quietChecks: number;
  /** Collect once after the start, however little the RSS grew: only where collect() shrinks what the start grew. */
  collectAfterStart: boolean;
}

/** How much the RSS must have grown since the last collection for the next quiet period to collect. */
const RECLAIM_GROWTH_BYTES = 16 * 2 ** 20;
/** How often the reclaimer looks: a period with no hook call in it counts as quiet. */
export const RECLAIM_CHECK_MS = 2_000;

export class MemoryReclaimer {
  private calls = 0;
  private callsAtLastCheck = 0;
  private quietChecks = 0;
  private baseline: number;
  /** The start's own burst is still to be given back, however little the RSS grew since. */
  private startPending: boolean;

  constructor(
    private readonly deps: ReclaimDeps,
    private readonly growthBytes = RECLAIM_GROWTH_BYTES,
  ) {
    this.baseline = deps.residentBytes();
    this.startPending = deps.collectAfterStart;
  }

  /** A hook call was answered: a counter only, so a settled call costs nothing more. */
  noteCall(): void {
    this.calls++;
  }

  /**
   * Run every RECLAIM_CHECK_MS. Collects when no call came for deps.quietChecks checks and the RSS
   * grew by growthBytes since the last collection (or none happened since the start), so a small
   * cluster's few calls never cause one. Returns the RSS before and after, or undefined when it did nothing.
   */
  check(): { before: number; after: number } | undefined {
    this.quietChecks = this.calls === this.callsAtLastCheck ? this.quietChecks + 1 : 0;
    this.callsAtLastCheck = this.calls;
    if (this.quietChecks < this.deps.quietChecks) return undefined;
    const before = this.deps.residentBytes();
    if (!this.startPending && before - this.baseline < this.growthBytes) return undefined;
    this.startPending = false;
    this.deps.collect();
    this.baseline = this.deps.residentBytes();
    return { before, after: this.baseline };
  }
}

type ExposedGc = (options?: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/**
 * The runtime's memory-reducing collection, or undefined when node runs without --expose-gc (the
 * image's entrypoint passes it). V8 13 (Node 24) reduces memory for a 'last-resort' GC at once.
 * The older V8 of Node 20 does not know that option: it shrinks the young generation at a full GC
 * only once it sees a low allocation rate, ~10 s after the calls stopped (measured: not at 6 s).
 */
export function runtimeReclaimDeps(
  gc = (globalThis as { gc?: ExposedGc }).gc,
  v8Major = Number(process.versions.v8.split('.')[0]),
): ReclaimDeps | undefined {
  if (typeof gc !== 'function') return undefined;
  const residentBytes = () => memoryUsage.rss();
  if (v8Major >= 13)
    return {
      collect: () => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' }),
      residentBytes,
      quietChecks: 1,
      collectAfterStart: true,
    };
  // Measured: Node 20's young generation stays at 16 MiB through a plain GC 12 s after the start (idle RSS +7 MiB).
  return { collect: () => gc(), residentBytes, quietChecks: Math.ceil(12_000 / RECLAIM_CHECK_MS), collectAfterStart: false };
}
