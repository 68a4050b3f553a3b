// A bounded map that forgets the least recently used entry first. Map keeps insertion order, so
// re-inserting on use is all the bookkeeping an LRU needs.
export class Lru<K, V> {
  private readonly map = new Map<K, V>();
  evictions = 0;

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.capacity) {
      this.map.delete(this.map.keys().next().value as K);
      this.evictions++;
    }
  }

  delete(key: K): void {
    this.map.delete(key);
  }

  keys(): K[] {
    return [...this.map.keys()];
  }

  clear(): void {
    this.map.clear();
  }
}
