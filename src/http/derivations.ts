// Validation and rendering are most of a hook call's CPU, and they depend only on the parent's
// spec, labels and annotations. Kept per object (uid), latest content only, so that an object
// edited again and again holds one entry.
import { createHash } from 'node:crypto';
import { Lru } from '../core/lru.js';
import type { Parent } from '../schema/hook.js';
import { derive, type Derived } from '../core/sync.js';

interface Entry {
  /** The object's resourceVersion when last seen: equal means unchanged, without hashing. */
  resourceVersion: string | undefined;
  content: string;
  value: Derived;
}

export class Derivations {
  private readonly entries: Lru<string, Entry>;

  constructor(
    capacity: number,
    private readonly defaultLattice: string,
  ) {
    this.entries = new Lru(capacity);
  }

  get size(): number {
    return this.entries.size;
  }

  of(parent: Parent): Derived {
    const { uid, resourceVersion } = parent.metadata;
    if (uid === undefined) return derive(parent, this.defaultLattice);
    const cached = this.entries.get(uid);
    // A settled resync: the very object we saw last time.
    if (cached && resourceVersion !== undefined && cached.resourceVersion === resourceVersion) return cached.value;
    const content = fingerprint(parent);
    if (content === undefined) return derive(parent, this.defaultLattice);
    // A status write changes resourceVersion but not what derive() reads.
    if (cached?.content === content) {
      this.entries.set(uid, { ...cached, resourceVersion });
      return cached.value;
    }
    const value = derive(parent, this.defaultLattice);
    this.entries.set(uid, { resourceVersion, content, value: withoutBody(value) });
    return value;
  }
}

/** Everything derive() reads, the generation too (a rollback brings earlier content back under a new one). */
function fingerprint(parent: Parent): string | undefined {
  const { namespace, name, generation, labels, annotations } = parent.metadata;
  try {
    return createHash('sha1').update(JSON.stringify([namespace, name, generation, labels, annotations, parent.spec])).digest('base64');
  } catch {
    return undefined; // too deep to serialise: derive() reports it
  }
}

/** The put body is most of an entry's size and needed only when putting: keep it out of the cache. */
function withoutBody(value: Derived): Derived {
  if (!value.rendered) return value;
  const { body: _body, ...rendered } = value.rendered;
  return { ...value, rendered };
}
