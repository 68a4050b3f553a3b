// The one test clock: time moves only when a test moves it, so TTLs and windows are counted, never timed.

export const TEST_EPOCH = Date.parse('2026-11-30T12:00:00Z');

export interface TestClock {
  /** Milliseconds since the epoch, as `Date.now()` would say. */
  now(): number;
  advance(ms: number): void;
  set(ms: number): void;
}

export function testClock(start = TEST_EPOCH): TestClock {
  let current = start;
  return {
    now: () => current,
    advance: (ms) => void (current += ms),
    set: (ms) => void (current = ms),
  };
}
