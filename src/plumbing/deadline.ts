// The deadline of the hook call being served, carried through everything it awaits: a hook call
// must end within Metacontroller's timeout, so every wait it makes (a lattice slot, a wadm reply,
// a read another call already sent, a retry's pause) is cut to the time it has left. Set by the
// HTTP shell around each action; read by the wadm client. On the monotonic clock.
import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';

const current = new AsyncLocalStorage<number>();

/** Runs `task` with a deadline `ms` from now on the monotonic clock (performance.now()). */
export function withinDeadline<T>(endsAt: number, task: () => T): T {
  return current.run(endsAt, task);
}

/** How long a wait may last: `cap`, or less when the call being served has less time left (never below 0). */
export function timeLeft(cap: number): number {
  const endsAt = current.getStore();
  return endsAt === undefined ? cap : Math.max(0, Math.min(cap, endsAt - performance.now()));
}
