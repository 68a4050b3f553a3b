// Bounds the wadm requests in flight per lattice, so that a restart with thousands of
// applications does not stampede wadm (which handles requests one at a time). A request that
// cannot get a slot in time fails as a Timeout: the hook then answers LatticeUnavailable with a
// short resync instead of blocking past Metacontroller's timeout.
import { WadmUnavailableError } from './errors.js';

export class Limiter {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly capacity: number) {}

  /** Nothing in flight and nobody waiting: dropping it loses nothing. */
  get idle(): boolean {
    return this.active === 0 && this.waiting.length === 0;
  }

  run<T>(task: () => Promise<T>, waitMs: number, what: string): Promise<T> {
    // A free slot is taken at once, without a turn of the event loop's microtasks: the common case.
    if (this.active < this.capacity) {
      this.active++;
      return this.holding(task);
    }
    return this.acquire(waitMs, what).then(() => this.holding(task));
  }

  /** Runs the task in the slot taken for it, and frees the slot once it settles. */
  private async holding<T>(task: () => Promise<T>): Promise<T> {
    try {
      return await task();
    } finally {
      this.release();
    }
  }

  private acquire(waitMs: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const grant = () => {
        clearTimeout(timer);
        this.active++;
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(grant), 1);
        reject(new WadmUnavailableError('Timeout', `${what}: no request slot within ${waitMs} ms (${this.capacity} in flight)`));
      }, waitMs);
      this.waiting.push(grant);
    });
  }

  private release(): void {
    this.active--;
    this.waiting.shift()?.();
  }
}

/** One Limiter per lattice, each dropped once idle (a lattice asked once keeps nothing). */
export class LatticeLimiters {
  private readonly limiters = new Map<string, Limiter>();

  constructor(private readonly capacity: number) {}

  run<T>(lattice: string, task: () => Promise<T>, waitMs: number, what: string): Promise<T> {
    let limiter = this.limiters.get(lattice);
    if (!limiter) this.limiters.set(lattice, (limiter = new Limiter(this.capacity)));
    const used = limiter;
    return used.run(task, waitMs, what).finally(() => {
      if (used.idle && this.limiters.get(lattice) === used) this.limiters.delete(lattice);
    });
  }

  /** Lattices with requests in flight or waiting. */
  get size(): number {
    return this.limiters.size;
  }
}
