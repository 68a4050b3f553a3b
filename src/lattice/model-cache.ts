// What we know of each wadm model (versions, deployed version, owner), so that a settled
// application's resync needs no NATS request. Kept current by our own writes and by wadm's
// deploy/undeploy events; everything else (a `wash app put` or delete by someone else) is
// noticed when an entry expires, after at most the TTL.
import type { Write } from '../core/facts.js';
import { afterWrite } from '../core/facts.js';
import type { Feed } from './watch.js';
import { Lru } from '../core/lru.js';
import { eventSubject } from './subjects.js';
import type { ModelFacts } from './wire.js';

interface Entry {
  model: ModelFacts | null;
  /** When wadm last told us: our own writes do not extend it, only reads do. */
  readAt: number;
}

export class ModelCache {
  private readonly entries: Lru<string, Entry>;

  constructor(
    private readonly ttlMs: number,
    capacity: number,
    private readonly now: () => number,
  ) {
    this.entries = new Lru(capacity);
  }

  get size(): number {
    return this.entries.size;
  }

  get evictions(): number {
    return this.entries.evictions;
  }

  /** The model, null for "no such model", undefined when unknown or expired. */
  get(lattice: string, name: string): ModelFacts | null | undefined {
    const entry = this.entries.get(key(lattice, name));
    if (!entry) return undefined;
    if (this.now() - entry.readAt >= this.ttlMs) {
      this.entries.delete(key(lattice, name));
      return undefined;
    }
    return entry.model;
  }

  /**
   * The current entry itself, while fresh: a new object after every change, so that an answer
   * computed from it can be reused while it is the same object (see src/answers.ts).
   */
  entry(lattice: string, name: string): object | undefined {
    return this.get(lattice, name) === undefined ? undefined : this.entries.get(key(lattice, name));
  }

  read(lattice: string, name: string, model: ModelFacts | null): void {
    this.entries.set(key(lattice, name), { model, readAt: this.now() });
  }

  /** Our write succeeded: wadm's model is now what the core expects it to be. */
  wrote(lattice: string, name: string, write: Write): void {
    const entry = this.entries.get(key(lattice, name));
    if (!entry) return;
    const model = afterWrite(entry.model, write);
    if (model === undefined) this.entries.delete(key(lattice, name));
    else this.entries.set(key(lattice, name), { model, readAt: entry.readAt });
  }

  forget(lattice: string, name: string): void {
    this.entries.delete(key(lattice, name));
  }

  clear(): void {
    this.entries.clear();
  }

  /**
   * wadm announces every deploy and undeploy (including those of `wash app` and of deletes) on
   * `wadm.evt.{lattice}.manifest_published|manifest_unpublished`: forget that model at once.
   */
  feed(): Feed {
    return {
      subject: eventSubject,
      receive: (lattice, msg) => {
        if (!/manifest_(un)?published$/.test(msg.subject)) return;
        const event = JSON.parse(msg.string()) as { data?: { name?: unknown; metadata?: { name?: unknown } } };
        const name = event.data?.metadata?.name ?? event.data?.name;
        if (typeof name === 'string') this.forget(lattice, name);
        else this.forgetLattice(lattice);
      },
    };
  }

  private forgetLattice(lattice: string): void {
    for (const k of this.entries.keys()) if (k.startsWith(`${lattice}/`)) this.entries.delete(k);
  }
}

function key(lattice: string, name: string): string {
  return `${lattice}/${name}`;
}
