// Running fuzz properties: every property from the same fixed seed, its cases counted and printed, and the
// checks a fuzz file ends with (nothing escaped, nothing polluted).
//
// Every property runs with the same fixed seed (each property starts from it, whatever ran before)
// and prints one line `[fuzz] <property>: <n> cases, seed <s>, ...`. FUZZ_SEED=<n> changes the seed,
// FUZZ_RUNS_FACTOR=<x> scales every number of runs (10 for a soak); rerunning with the printed seed
// and factor reproduces a failure. A failure prints fast-check's report: seed, path, the shrunk
// counterexample and the error. Counterexamples of big inputs are descriptions (a depth, a size),
// never the megabytes themselves, so that reports stay readable.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import fc from 'fast-check';
import type { HookResponse } from '../../../src/schema/hook.js';
import { DEPLOY_GRACE_MS } from '../../../src/core/evidence.js';
import { createLogger } from '../../../src/plumbing/logger.js';
import { TEST_EPOCH } from '../clock.js';

export const SEED = Number(process.env['FUZZ_SEED'] ?? 20261130);
export const FACTOR = Number(process.env['FUZZ_RUNS_FACTOR'] ?? 1);
export const runs = (n: number): number => Math.max(1, Math.round(n * FACTOR));
export const NOW = TEST_EPOCH;
export const SILENT = createLogger('silent');

export const totals: { title: string; cases: number; failed: boolean }[] = [];

export async function property<T>(
  title: string,
  arbitrary: fc.Arbitrary<T>,
  numRuns: number,
  predicate: (value: T) => Promise<void>,
): Promise<void> {
  const started = performance.now();
  const details = await fc.check(fc.asyncProperty(arbitrary, predicate), { seed: SEED, numRuns, includeErrorInReport: true });
  const ms = Math.round(performance.now() - started);
  const outcome = details.failed ? `FAILED at case ${details.numRuns} (shrunk ${details.numShrinks} times)` : 'passed';
  console.log(`[fuzz] ${title}: ${details.numRuns} cases, seed ${details.seed}, ${ms} ms, ${outcome}`);
  totals.push({ title, cases: details.numRuns, failed: details.failed });
  if (details.failed) throw new Error(fc.defaultReportMessage(details));
}

/** Counts outcomes, to show what the cases covered (a property over inputs that never reach wadm proves little). */
export class Tally {
  private readonly counts = new Map<string, number>();
  add(key: string): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }
  print(title: string): void {
    const entries = [...this.counts.entries()].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`);
    console.log(`[fuzz] ${title}: ${entries.join(', ')}`);
  }
}

/**
 * The status fed back is a fixed point, but for a deploy awaiting wadm's report (core/evidence.ts):
 * that wait may end once the deploy grace has passed, and only then.
 */
export function assertFixedPoint(first: HookResponse['status'], second: HookResponse['status'], advanceMs: number): void {
  const moved = JSON.stringify(second) !== JSON.stringify(first);
  if (moved && first.deployedAt !== undefined && advanceMs >= DEPLOY_GRACE_MS) {
    assert.equal(second.deployedAt, undefined, 'a wait for wadm ends, once the deploy grace has passed, with what wadm says');
    return;
  }
  assert.equal(JSON.stringify(second), JSON.stringify(first));
}

export const outcome = (response: HookResponse): string => response.status.conditions?.[0]?.reason ?? 'none';

// Unhandled rejections and uncaught exceptions anywhere in a fuzz file fail its last test (checkAfterFuzzing).
export const escaped: string[] = [];
process.on('unhandledRejection', (reason) => escaped.push(`unhandledRejection: ${String((reason as Error)?.stack ?? reason)}`));
process.on('uncaughtExceptionMonitor', (err) => escaped.push(`uncaughtException: ${err.stack ?? String(err)}`));

// Keys on Object.prototype before any fuzzing: no input may add to them.
export const PROTOTYPE_KEYS = JSON.stringify(Object.getOwnPropertyNames(Object.prototype).sort());
export function assertNoPrototypePollution(): void {
  assert.equal(JSON.stringify(Object.getOwnPropertyNames(Object.prototype).sort()), PROTOTYPE_KEYS, 'Object.prototype was modified');
  assert.equal(Object.getPrototypeOf({}), Object.prototype);
}

/**
 * A full collection, then heapUsed. --expose-gc cannot be passed from inside a test file, but a
 * context created after the flag is set gets a global gc().
 */
export function exposeGc(): () => Promise<number> {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  return async () => {
    for (let i = 0; i < 4; i++) {
      gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
    return process.memoryUsage().heapUsed;
  };
}

/** Registers the last test of a fuzz file: nothing escaped and nothing polluted while its properties ran. */
export function checkAfterFuzzing(): void {
  describe('after fuzzing', () => {
    it('saw no unhandled rejection, no uncaught exception and no prototype pollution', () => {
      const cases = totals.reduce((sum, t) => sum + t.cases, 0);
      const failed = totals.filter((t) => t.failed).map((t) => t.title);
      console.log(`[fuzz] total: ${cases} cases in ${totals.length} properties; failed: ${failed.length > 0 ? failed.join(', ') : 'none'}`);
      assertNoPrototypePollution();
      assert.deepEqual(escaped, []);
    });
  });
}
