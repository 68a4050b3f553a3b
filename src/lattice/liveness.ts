// When each lattice's wadm last answered a request: what Knowledge requires before anything
// remembered of the lattice is used (a wadm that stopped answering must show in the answers).
export class Liveness {
  private readonly answeredAt = new Map<string, number>();
  /** answeredAt's size after its last sweep: the next one comes when it has doubled. */
  private answeredAfterSweep = 64;

  constructor(
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  /** Lattices whose last answer is remembered: bounded by the window, not by the applications. */
  get size(): number {
    return this.answeredAt.size;
  }

  /** wadm of this lattice answered a request. */
  answered(lattice: string): void {
    this.answeredAt.set(lattice, this.now());
    // Reads of keys through other lattices (collisions.ts) add lattices no application is in:
    // drop the answers older than the window, which no check reads.
    if (this.answeredAt.size >= 2 * this.answeredAfterSweep) this.sweep();
  }

  isAlive(lattice: string): boolean {
    const at = this.answeredAt.get(lattice);
    return at !== undefined && this.now() - at < this.windowMs;
  }

  clear(): void {
    this.answeredAt.clear();
  }

  private sweep(): void {
    const now = this.now();
    for (const [lattice, at] of this.answeredAt) if (now - at >= this.windowMs) this.answeredAt.delete(lattice);
    this.answeredAfterSweep = Math.max(64, this.answeredAt.size);
  }
}
