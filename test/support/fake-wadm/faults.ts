// Fault injection: queued per operation, each fault used `times` times, oldest first.
import type { WadmOp } from './types.js';

export type Fault =
  /** wadm's reply to a failed KV read: `{"result":"error","message":"Internal storage error"}`. */
  | { kind: 'storage-error' }
  /** Handle normally after `ms`; like wadm's serial request loop, later requests wait too. */
  | { kind: 'delay'; ms: number }
  /** Send nothing. With `apply: true` the request still takes effect (a lost reply). */
  | { kind: 'no-reply'; apply?: boolean }
  /** Reply `{"result":"error","message":message}`. */
  | { kind: 'error'; message: string };

export type FaultTarget = WadmOp | '*';

interface Entry { op: FaultTarget; fault: Fault; left: number }

export class FaultQueue {
  private entries: Entry[] = [];

  add(op: FaultTarget, fault: Fault, times = 1): void {
    if (!Number.isInteger(times) || times < 1) throw new Error(`times must be a positive integer, got ${times}`);
    this.entries.push({ op, fault, left: times });
  }

  /** Takes one use of the oldest fault that matches `op`. */
  take(op: WadmOp): Fault | undefined {
    const entry = this.entries.find((e) => e.op === op || e.op === '*');
    if (entry === undefined) return undefined;
    entry.left -= 1;
    if (entry.left === 0) this.entries = this.entries.filter((e) => e !== entry);
    return entry.fault;
  }

  pending(): number {
    return this.entries.reduce((sum, e) => sum + e.left, 0);
  }

  clear(): void {
    this.entries = [];
  }
}

/** The storage-error reply of each op: delete builds its own message and keeps `undeploy`. */
export function storageErrorReply(op: WadmOp, name: string | undefined): object {
  if (op === 'del') {
    return {
      result: 'error',
      message: `Internal storage error while fetching manifest data for application ${name ?? ''}`,
      undeploy: false,
    };
  }
  return { result: 'error', message: 'Internal storage error' };
}
