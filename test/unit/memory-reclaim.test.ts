// The reclaimer asks for a memory-reducing collection once per burst: only after a check period
// with no call in it, only when the RSS grew enough since the last one. Counted, not timed: the
// checks are called by hand and the RSS is a number the test sets.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryReclaimer, runtimeReclaimDeps } from '../../src/plumbing/memory-reclaim.js';

const MiB = 2 ** 20;

/** A reclaimer whose start's collection is behind it (see the first test), unless `fresh`. */
function subject(startRss: number, quietChecks = 1, { fresh = false, collectAfterStart = true } = {}) {
  const state = { rss: startRss, collections: 0, afterCollection: startRss };
  const reclaimer = new MemoryReclaimer(
    {
      collect: () => {
        state.collections++;
        state.rss = state.afterCollection;
      },
      residentBytes: () => state.rss,
      quietChecks,
      collectAfterStart,
    },
    16 * MiB,
  );
  if (!fresh) {
    for (let i = 0; i < quietChecks; i++) reclaimer.check();
    state.collections = 0;
  }
  return { state, reclaimer };
}

describe('MemoryReclaimer', () => {
  it("gives the start's own burst back at the first quiet period, however little the RSS grew, and only once", () => {
    const { state, reclaimer } = subject(93 * MiB, 1, { fresh: true });
    state.afterCollection = 83 * MiB;
    reclaimer.noteCall();
    assert.equal(reclaimer.check(), undefined, 'a call came: not quiet yet');
    assert.deepEqual(reclaimer.check(), { before: 93 * MiB, after: 83 * MiB });
    for (let i = 0; i < 5; i++) assert.equal(reclaimer.check(), undefined);
    assert.equal(state.collections, 1);
  });

  it('leaves the start alone where the runtime would not give its memory back (Node 20)', () => {
    const { state, reclaimer } = subject(76 * MiB, 6, { fresh: true, collectAfterStart: false });
    for (let i = 0; i < 20; i++) reclaimer.check();
    assert.equal(state.collections, 0);
  });

  it('collects once after a burst, when a check period passed without calls', () => {
    const { state, reclaimer } = subject(70 * MiB);
    for (let i = 0; i < 10_000; i++) reclaimer.noteCall();
    state.rss = 220 * MiB;
    state.afterCollection = 115 * MiB;
    assert.equal(reclaimer.check(), undefined, 'calls came since the last check: still busy');
    assert.deepEqual(reclaimer.check(), { before: 220 * MiB, after: 115 * MiB });
    assert.equal(reclaimer.check(), undefined, 'nothing grew since');
    assert.equal(state.collections, 1);
  });

  it('never collects while calls keep coming', () => {
    const { state, reclaimer } = subject(70 * MiB);
    state.rss = 300 * MiB;
    for (let period = 0; period < 100; period++) {
      reclaimer.noteCall();
      assert.equal(reclaimer.check(), undefined);
    }
    assert.equal(state.collections, 0);
  });

  it('leaves a small cluster alone: a few calls that grow the RSS by less than the threshold', () => {
    const { state, reclaimer } = subject(70 * MiB);
    for (let period = 0; period < 50; period++) {
      reclaimer.noteCall();
      state.rss += 0.2 * MiB;
      reclaimer.check();
      reclaimer.check();
    }
    assert.equal(state.collections, 0, `RSS grew ${(state.rss - 70 * MiB) / MiB} MiB`);
  });

  it('waits for as many quiet checks in a row as the runtime needs', () => {
    const { state, reclaimer } = subject(70 * MiB, 3);
    state.rss = 220 * MiB;
    reclaimer.noteCall();
    const results = Array.from({ length: 5 }, () => reclaimer.check() !== undefined);
    assert.deepEqual(results, [false, false, false, true, false], 'the first check saw the call; three quiet ones follow');
    assert.equal(state.collections, 1);
  });

  it('measures growth from what the last collection left, so the next burst of the same size collects again', () => {
    const { state, reclaimer } = subject(70 * MiB);
    state.afterCollection = 115 * MiB;
    for (let burst = 0; burst < 3; burst++) {
      reclaimer.noteCall();
      state.rss = 220 * MiB;
      reclaimer.check();
      reclaimer.check();
    }
    assert.equal(state.collections, 3);
  });
});

describe('runtimeReclaimDeps', () => {
  it('is off without --expose-gc', () => {
    assert.equal(runtimeReclaimDeps(undefined, 13), undefined);
  });

  it("asks V8 13 (Node 24) for a 'last-resort' collection once calls stopped, and older V8 for a plain one after ~12 s", () => {
    const calls: unknown[][] = [];
    const gc = (...args: unknown[]) => void calls.push(args);
    const node24 = runtimeReclaimDeps(gc, 13)!;
    const node20 = runtimeReclaimDeps(gc, 11)!;
    node24.collect();
    node20.collect();
    assert.deepEqual(calls, [[{ type: 'major', execution: 'sync', flavor: 'last-resort' }], []]);
    assert.equal(node24.quietChecks, 1);
    assert.equal(node20.quietChecks, 6);
    assert.equal(node24.collectAfterStart, true);
    assert.equal(node20.collectAfterStart, false);
  });
});
