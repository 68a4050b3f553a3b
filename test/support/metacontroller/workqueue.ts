// Metacontroller v4.17's workqueue for our CompositeController, on a clock the test owns. The
// emulator (../metacontroller.ts) makes one pass per call; this decides when each parent gets a
// pass, as Metacontroller does (pkg/controller/composite/controller.go, client-go util/workqueue):
//   - a rate-limiting delaying queue: a key waits in the queue at most once, a key added while its
//     pass runs gets one more pass after it, and of two delays for a key the earlier one counts;
//   - DefaultTypedControllerRateLimiter: the worse of a per-key exponential backoff (5 ms · 2ⁿ
//     after n failures, capped at 1000 s) and one token bucket shared by every key (10 per second,
//     burst 100), both consulted on every AddRateLimited;
//   - what processNextWorkItem and sync do with a pass: an error → AddRateLimited; a 429 →
//     AddAfter(Retry-After) and Forget (its failures are dropped); a 200 → AddAfter
//     (resyncAfterSeconds) if asked, and Forget; a status or finalizer write → the informer's update
//     event → Add;
//   - the informer's resync every resyncPeriodSeconds: Add for every parent;
//   - --workers passes at once (5).
// Time is the test clock's: a pass takes no time on it (its HTTP call runs for real, and the clock
// waits), and the clock jumps to the next thing due once no pass runs.
import type { TestClock } from '../clock.js';
import type { FakeMetacontroller, PassResult } from '../metacontroller.js';
import type { ParentStore } from './api-server.js';

const BASE_DELAY_MS = 5;
const MAX_DELAY_MS = 1_000_000;
const BUCKET_PER_SECOND = 10;
const BUCKET_BURST = 100;

/** client-go's TypedItemExponentialFailureRateLimiter(5 ms, 1000 s) and TypedBucketRateLimiter(10, 100), under MaxOf. */
export class ControllerRateLimiter {
  private readonly failures = new Map<string, number>();
  private tokens = BUCKET_BURST;
  private filledAt: number;

  constructor(private readonly now: () => number) {
    this.filledAt = now();
  }

  /** The delay of an AddRateLimited: both limiters count it (the bucket reserves a token even when the backoff is longer). */
  when(key: string): number {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    const backoff = Math.min(BASE_DELAY_MS * 2 ** failures, MAX_DELAY_MS);
    return Math.max(backoff, this.reserve());
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  failuresOf(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** golang.org/x/time/rate's Reserve().Delay(): tokens refill continuously; a reservation may take the count below zero. */
  private reserve(): number {
    const at = this.now();
    this.tokens = Math.min(BUCKET_BURST, this.tokens + ((at - this.filledAt) / 1000) * BUCKET_PER_SECOND);
    this.filledAt = at;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / BUCKET_PER_SECOND) * 1000;
  }
}

/** client-go's queue semantics: dirty, processing and the delayed keys (the earliest delay wins). */
class DelayingQueue {
  private readonly ready: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly waiting = new Map<string, number>();

  add(key: string): void {
    if (this.dirty.has(key)) return;
    this.dirty.add(key);
    if (!this.processing.has(key)) this.ready.push(key);
  }

  addAfter(key: string, delayMs: number, now: number): void {
    if (delayMs <= 0) return this.add(key);
    const at = now + delayMs;
    const earlier = this.waiting.get(key);
    if (earlier === undefined || at < earlier) this.waiting.set(key, at);
  }

  get(): string | undefined {
    const key = this.ready.shift();
    if (key === undefined) return undefined;
    this.processing.add(key);
    this.dirty.delete(key);
    return key;
  }

  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key)) this.ready.push(key);
  }

  /** Moves every key due by `now` into the queue. */
  promote(now: number): void {
    for (const [key, at] of [...this.waiting].sort((a, b) => a[1] - b[1])) {
      if (at > now) continue;
      this.waiting.delete(key);
      this.add(key);
    }
  }

  nextDueAt(): number | undefined {
    let next: number | undefined;
    for (const at of this.waiting.values()) if (next === undefined || at < next) next = at;
    return next;
  }

  get readyCount(): number {
    return this.ready.length;
  }
}

export interface QueueOptions {
  workers?: number;
  /** The informer's resync period (the CompositeController's resyncPeriodSeconds); default: the emulator's. */
  resyncPeriodMs?: number;
  /** When the first periodic resync comes, on the clock; default: one period after the queue starts. */
  firstResyncAt?: number;
}

/** One pass as the queue saw it: when (on the clock), which parent, what happened. */
export interface QueuedPass {
  at: number;
  key: string;
  result: PassResult;
  /** The rate limiter's delay, when the pass failed and was requeued by AddRateLimited. */
  rateLimitedMs?: number;
}

export class MetacontrollerQueue<Api extends ParentStore = ParentStore> {
  readonly limiter: ControllerRateLimiter;
  /** Every pass so far, in the order they ended. */
  readonly passes: QueuedPass[] = [];
  private readonly queue = new DelayingQueue();
  private readonly parents = new Set<string>();
  private readonly workers: number;
  private readonly resyncPeriodMs: number;
  private nextResyncAt: number;

  constructor(
    private readonly mc: FakeMetacontroller<Api>,
    private readonly clock: TestClock,
    options: QueueOptions = {},
  ) {
    this.limiter = new ControllerRateLimiter(clock.now);
    this.workers = options.workers ?? 5;
    this.resyncPeriodMs = options.resyncPeriodMs ?? mc.resyncPeriodMs;
    this.nextResyncAt = options.firstResyncAt ?? clock.now() + this.resyncPeriodMs;
  }

  /** The informer saw the parent (added or updated): it is queued now. */
  add(namespace: string, name: string): void {
    this.track(namespace, name);
    this.queue.add(`${namespace}/${name}`);
  }

  /** The informer holds the parent (periodic resyncs queue it) but no event queues it now. */
  track(namespace: string, name: string): void {
    this.parents.add(`${namespace}/${name}`);
  }

  /**
   * Runs passes, moving the clock to whatever is due next, until `done()` holds after a pass (then
   * returns true) or nothing is due before `before` (then the clock is set there and it returns
   * false). Passes due exactly at `before` are left for the next run.
   */
  async run(done: () => boolean, before: number, { maxPasses = 10_000 } = {}): Promise<boolean> {
    const running = new Map<string, Promise<{ key: string; result: PassResult }>>();
    const limit = this.passes.length + maxPasses;
    for (;;) {
      if (running.size === 0 && done()) return true;
      // A Retry-After of 0 requeues at once, and the clock does not move: Metacontroller's hot loop.
      if (this.passes.length >= limit)
        throw new Error(`more than ${maxPasses} passes before ${new Date(before).toISOString()}: a hot loop`);
      while (running.size < this.workers && this.queue.readyCount > 0) {
        const key = this.queue.get()!;
        const [namespace = '', name = ''] = key.split('/');
        running.set(
          key,
          this.mc.reconcile(namespace, name).then((result) => ({ key, result })),
        );
      }
      if (running.size > 0) {
        const { key, result } = await Promise.race(running.values());
        running.delete(key);
        this.settle(key, result);
        if (done()) {
          await Promise.all(running.values()).then((left) => left.forEach(({ key: k, result: r }) => this.settle(k, r)));
          return true;
        }
        continue;
      }
      const due = [this.queue.nextDueAt(), this.nextResyncAt].filter((at): at is number => at !== undefined);
      const next = Math.min(...due);
      if (!(next < before)) {
        this.clock.set(Math.max(this.clock.now(), before));
        return false;
      }
      this.clock.set(Math.max(this.clock.now(), next));
      if (this.nextResyncAt <= this.clock.now()) {
        for (const key of this.parents) this.queue.add(key);
        this.nextResyncAt += this.resyncPeriodMs;
      }
      this.queue.promote(this.clock.now());
    }
  }

  /** controller.go's processNextWorkItem and sync after a pass of `key`. */
  private settle(key: string, result: PassResult): void {
    const now = this.clock.now();
    const pass: QueuedPass = { at: now, key, result };
    if (result.removed) {
      this.parents.delete(key);
      this.limiter.forget(key);
    } else if (result.error !== undefined) {
      pass.rateLimitedMs = this.limiter.when(key);
      this.queue.addAfter(key, pass.rateLimitedMs, now);
    } else {
      const again = result.retryAfterSeconds ?? result.resyncAfterSeconds;
      if (again !== undefined) this.queue.addAfter(key, again * 1000, now);
      this.limiter.forget(key);
    }
    // Our own write of the parent comes back as an informer update while the pass still counts as running.
    if (result.statusChanged || result.finalizerChanged) this.queue.add(key);
    this.queue.done(key);
    this.passes.push(pass);
  }
}
