// client-go's ItemExponentialFailureRateLimiter as used by DefaultTypedControllerRateLimiter: 5 ms·2ⁿ per key,
// capped at 1000 s, reset by Forget after a successful sync. (The global 10 qps / burst 100 bucket is not modelled.)

export class ItemExponentialBackoff {
  private readonly failures = new Map<string, number>();

  constructor(
    private readonly baseMs = 5,
    private readonly maxMs = 1_000_000,
  ) {}

  /** Delay of the next retry of `key`; counts one more failure (AddRateLimited). */
  when(key: string): number {
    const exponent = this.failures.get(key) ?? 0;
    this.failures.set(key, exponent + 1);
    return Math.min(this.baseMs * 2 ** exponent, this.maxMs);
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  retries(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}
