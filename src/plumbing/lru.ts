// A bounded map that forgets the least recently used entry first. Map keeps insertion order, so
// re-inserting on use is all the bookkeeping an LRU needs.
export class Lru<K, V> {
  private readonly map = new Map<K, V>();
  /** The most recently used key: a hook call reads its entry several times, and moving an entry
   * already at the end would only churn the Map's table (a delete leaves a hole until a rehash). */
  private newest: K | undefined;
  evictions = 0;

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined && key !== this.newest) {
      this.map.delete(key);
      this.map.set(key, value);
      this.newest = key;
    }
    return value;
  }

  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    this.newest = key;
    if (this.map.size > this.capacity) {
      this.map.delete(this.map.keys().next().value as K);
      this.evictions++;
    }
  }

  delete(key: K): void {
    this.map.delete(key);
    if (key === this.newest) this.newest = undefined;
  }

  keys(): K[] {
    return [...this.map.keys()];
  }

  /** Every entry, least recently used first, without counting as a use; the map must not change meanwhile. */
  entries(): IterableIterator<[K, V]> {
    return this.map.entries();
  }

  clear(): void {
    this.map.clear();
    this.newest = undefined;
  }
}
