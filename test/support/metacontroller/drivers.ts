// Scenario drivers: what Metacontroller's workqueue would do next after each pass. A write to the parent (finalizer
// or status) comes back as a watch event, so it triggers the next pass at once; resyncAfterSeconds, Retry-After
// and error backoff trigger it later. In 'immediate' mode those delays are skipped (only a tick is yielded).
import { setImmediate as nextTick } from 'node:timers/promises';
import type { K8sObject, PassResult } from './types.js';
import { canonicalJson } from './json.js';
import { until } from '../wait.js';

export interface Reconciler {
  reconcile(namespace: string, name: string): Promise<PassResult>;
  get(namespace: string, name: string): K8sObject | undefined;
  delete(namespace: string, name: string): { removed: boolean } | Promise<{ removed: boolean }>;
  readonly statusWrites: number;
  readonly resyncPeriodSeconds: number;
}

export interface DelayOptions {
  honourResync?: 'immediate' | 'real';
  /** Upper bound of any real sleep in 'real' mode. */
  realResyncCapMs?: number;
}

export interface StableOptions extends DelayOptions {
  maxPasses?: number;
  untilReady?: (obj: K8sObject) => boolean;
}

export interface StableResult {
  passes: number;
  statusWrites: number;
  object: K8sObject | undefined;
  /** The last pass wrote nothing and scheduled nothing. */
  stable: boolean;
  results: PassResult[];
}

export interface FinalizeResult {
  passes: number;
  removed: boolean;
  object: K8sObject | undefined;
  results: PassResult[];
}

/** A pass after which Metacontroller would not sync this parent again until something else changes. */
export function isQuiet(r: PassResult): boolean {
  return !r.statusChanged && !r.finalizerChanged && r.error === undefined
    && r.retryAfterSeconds === undefined && r.resyncAfterSeconds === undefined;
}

/** Milliseconds until the workqueue would hand the key out again; undefined when nothing is scheduled. */
export function nextDelayMs(r: PassResult): number | undefined {
  if (r.statusChanged || r.finalizerChanged) return 0;
  if (r.backoffMs !== undefined) return r.backoffMs;
  if (r.retryAfterSeconds !== undefined) return Math.max(0, r.retryAfterSeconds * 1000);
  if (r.resyncAfterSeconds !== undefined) return r.resyncAfterSeconds * 1000;
  return undefined;
}

export async function pause(ms: number, options: DelayOptions): Promise<void> {
  if ((options.honourResync ?? 'immediate') === 'immediate' || ms <= 0) {
    await nextTick();
    return;
  }
  await new Promise((resolve) => setTimeout(resolve, Math.min(ms, options.realResyncCapMs ?? 2000)));
}

export async function reconcileUntilStable(mc: Reconciler, ns: string, name: string, options: StableOptions = {}): Promise<StableResult> {
  const maxPasses = options.maxPasses ?? 20;
  const writesBefore = mc.statusWrites;
  const results: PassResult[] = [];
  const statuses: string[] = [];
  const done = (stable: boolean): StableResult => ({
    passes: results.length, statusWrites: mc.statusWrites - writesBefore, object: mc.get(ns, name), stable, results,
  });
  while (results.length < maxPasses) {
    const result = await mc.reconcile(ns, name);
    results.push(result);
    const obj = mc.get(ns, name);
    statuses.push(canonicalJson(obj?.status));
    if (!obj) return done(true);
    if (options.untilReady?.(obj)) return done(isQuiet(result));
    if (isQuiet(result)) return done(true);
    await pause(nextDelayMs(result) ?? 0, options);
  }
  throw new Error(
    `${ns}/${name} did not settle within ${maxPasses} passes (a hot loop: every pass wrote status, scheduled a resync `
    + `or failed).\nlast passes: ${results.slice(-3).map(summarize).join('\n             ')}`
    + `\nlast statuses:\n  ${statuses.slice(-3).join('\n  ')}`,
  );
}

export async function waitFor(
  mc: Reconciler, ns: string, name: string,
  predicate: (obj: K8sObject | undefined) => boolean,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<{ passes: number; object: K8sObject | undefined }> {
  let passes = 0;
  let last: PassResult | undefined;
  const pass = async () => {
    if (mc.get(ns, name)) {
      last = await mc.reconcile(ns, name);
      passes += 1;
    }
    return predicate(mc.get(ns, name));
  };
  const what = () => `${ns}/${name} after ${passes} passes\nlast pass: ${last ? summarize(last) : 'none'}\nstatus: ${canonicalJson(mc.get(ns, name)?.status)}`;
  await until(pass, { what, timeoutMs: options.timeoutMs ?? 5000, intervalMs: options.intervalMs ?? 50 });
  return { passes, object: mc.get(ns, name) };
}

/**
 * Deletes the parent and reconciles until it is gone. A quiet pass does not end the run: real Metacontroller would be
 * woken by resyncPeriodSeconds (slept in 'real' mode, capped). Returns removed: false after maxPasses.
 */
export async function deleteAndFinalize(mc: Reconciler, ns: string, name: string, options: StableOptions = {}): Promise<FinalizeResult> {
  const results: PassResult[] = [];
  if ((await mc.delete(ns, name)).removed) return { passes: 0, removed: true, object: undefined, results };
  while (results.length < (options.maxPasses ?? 20)) {
    const result = await mc.reconcile(ns, name);
    results.push(result);
    if (!mc.get(ns, name)) return { passes: results.length, removed: true, object: undefined, results };
    await pause(nextDelayMs(result) ?? mc.resyncPeriodSeconds * 1000, options);
  }
  return { passes: results.length, removed: false, object: mc.get(ns, name), results };
}

function summarize(r: PassResult): string {
  const parts = [`${r.hook ?? 'none'} → ${r.httpStatus ?? 'no response'}`];
  if (r.error !== undefined) parts.push(`error: ${r.error}`);
  if (r.statusChanged) parts.push('status written');
  if (r.finalizerChanged) parts.push('finalizer written');
  if (r.resyncAfterSeconds !== undefined) parts.push(`resyncAfterSeconds ${r.resyncAfterSeconds}`);
  if (r.retryAfterSeconds !== undefined) parts.push(`Retry-After ${r.retryAfterSeconds}s`);
  return parts.join(', ');
}
