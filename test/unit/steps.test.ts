// The step loop (core/steps.ts) is bounded: a wadm whose answers keep the core asking ends the call
// as LatticeUnavailable after MAX_STEPS requests. The core must answer then, whatever else still
// wants an action (a former lattice included): asking on would loop without a single await and
// wedge the process. Counted in decide calls, never in time.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { callOf, type Call } from '../../src/core/application.js';
import { decideFinalize, decideSync, type Step } from '../../src/core/decide.js';
import type { Action, ActionResult, LatticeFacts } from '../../src/core/facts.js';
import { MAX_STEPS, runSteps } from '../../src/core/steps.js';
import { fromPolicy } from '../../src/core/tenancy.js';
import { MemoryLattices } from '../support/memory-lattice.js';
import { wasmApp, hookRequest } from '../support/resources.js';

const NOW = Date.parse('2026-11-30T12:00:00Z');
const ANY = fromPolicy({ rules: [{ namespaces: ['*'], lattices: ['*'] }] }, 'default');

/** decide, counted; past `limit` calls it throws, so that a loop fails the test instead of hanging it. */
function counted(decide: (call: Call, facts: LatticeFacts) => Step, limit: number) {
  const calls = { n: 0 };
  const wrapped = (call: Call, facts: LatticeFacts): Step => {
    if (++calls.n > limit) throw new Error(`decide called ${calls.n} times: the step loop does not end`);
    return decide(call, facts);
  };
  return { calls, decide: wrapped };
}

/**
 * Deployed in lattice b after a move from a, whose wadm keeps the delete from ever landing: the
 * model is there, ours, at every read, and every delete answers "not found" (read again).
 */
async function stuckFormerLattice() {
  const lattices = new MemoryLattices();
  const parent = wasmApp().inLattice('b').build();
  const first = await lattices.run(decideSync, callOf(hookRequest(parent), ANY, { now: NOW }));
  // wadm reports it deployed in b: the move may now retire a.
  lattices.of('b').setStatus('hello-world', { status: { type: 'deployed' } });
  const status = { ...first.response.status, formerLattices: ['a'] };
  const owner = callOf(hookRequest(parent), ANY, { now: NOW }).app.owner;
  const perform = (action: Action): Promise<ActionResult> => {
    if (action.lattice !== 'a') return lattices.perform('b', 'hello-world', action);
    if (action.kind === 'read-model')
      return Promise.resolve({
        kind: 'model',
        model: { versions: ['v1'], deployedVersion: 'v1', known: { v1: { version: 'v1', owner, contentHash: null } } },
      });
    return Promise.resolve({ kind: 'stale' });
  };
  return { parent, status, perform };
}

describe('the step loop past MAX_STEPS', () => {
  for (const [hook, decide, finalizing] of [
    ['sync', decideSync, false],
    ['finalize', decideFinalize, true],
  ] as const) {
    it(`answers ${hook} LatticeUnavailable with the reason, keeping the former lattice, while that lattice still wants an action`, async () => {
      const { parent, status, perform } = await stuckFormerLattice();
      const { calls, decide: decideCounted } = counted(decide, 10 * MAX_STEPS);
      const call = callOf(hookRequest(parent, { status, finalizing }), ANY, { now: NOW });
      const run = await runSteps(decideCounted, call, perform);
      assert.equal(run.actions.length, MAX_STEPS);
      assert.equal(calls.n, MAX_STEPS + 2, 'one decide per request, one that finds the bound, one that answers');
      const ready = run.response.status.conditions!.find((c) => c.type === 'Ready')!;
      assert.equal(ready.reason, 'LatticeUnavailable');
      assert.equal(
        run.response.status.message,
        `Cannot reach wadm for lattice "a" (BadReply): wadm gave inconsistent answers over ${MAX_STEPS} requests in one hook call, so the call stopped there; will retry`,
      );
      assert.deepEqual(run.response.status.formerLattices, ['a']);
      assert.ok(run.response.resyncAfterSeconds! > 0);
      if (finalizing) assert.equal(run.response.finalized, false);
      else assert.equal('finalized' in run.response, false);
    });
  }

  it('throws rather than loop when a decide still asks past the bound (a bug, answered 500 by the shell)', async () => {
    const asking = (): Step => ({ action: { kind: 'read-model' } });
    const call = callOf(hookRequest(wasmApp().build()), ANY, { now: NOW });
    const { decide } = counted(asking, 10 * MAX_STEPS);
    await assert.rejects(
      runSteps(decide, call, () => Promise.resolve({ kind: 'model', model: null })),
      /the core asked for read-model after 160 requests, past its bound/,
    );
  });
});
