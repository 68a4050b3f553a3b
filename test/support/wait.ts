// The one way tests wait: for a state, never for a time. `until` polls a check until it holds; its timeout is a
// safety net far above the expected time (a loaded 2-core CI machine is slow), so a broken test fails with a
// message instead of hanging — it is never the assertion.

export interface WaitOptions {
  /** What is awaited, for the failure message; a function is asked only when the wait fails. */
  what?: string | (() => string);
  timeoutMs?: number;
  intervalMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_INTERVAL_MS = 20;

/** Resolves with the first truthy result of `check`; a number as options is the timeout. */
export async function until<T>(
  check: () => T | Promise<T>,
  options: number | WaitOptions = {},
): Promise<Exclude<T, false | undefined | null | 0 | ''>> {
  const {
    what = 'condition',
    timeoutMs = DEFAULT_TIMEOUT_MS,
    intervalMs = DEFAULT_INTERVAL_MS,
  } = typeof options === 'number' ? { timeoutMs: options } : options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Exclude<T, false | undefined | null | 0 | ''>;
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms: ${typeof what === 'function' ? what() : what}`);
    await sleep(intervalMs);
  }
}

/** Only for spacing out polls or letting a peer run; never to wait for a result. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
