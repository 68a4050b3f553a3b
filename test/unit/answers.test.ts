import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import type { Lattice } from '../../src/sync.js';
import { fromPolicy, parsePolicy, type Tenancy } from '../../src/core/tenancy.js';
import { testClock } from '../support/clock.js';
import { testHooks } from '../support/http.js';
import { MemoryLattice } from '../support/memory-lattice.js';
import { wasmApp, hookRequest } from '../support/resources.js';

const SILENT = pino({ level: 'silent' });

/** A MemoryLattice whose knowledge stamp is a token the test swaps to say "something changed". */
function lattice() {
  const memory = new MemoryLattice();
  const state = { token: {} as object | undefined };
  const knowledge = { stamp: () => state.token, checkpoint: () => 0, remember: () => undefined, rememberSizes: () => undefined };
  const l: Lattice = { perform: (a, b, c) => memory.perform(a, b, c), knowledge };
  return { memory, state, l };
}

/** Hooks that count answers served from memory, as the hook_answers_total metric does. */
function hooksOver(l: Lattice, tenancy: Tenancy, now = testClock().now) {
  const reused = { hits: 0 };
  const hooks = testHooks(l, {
    tenancy,
    budgetMs: 1000,
    now,
    cacheEntries: 100,
    onAnswer: (source) => void (source === 'memory' && reused.hits++),
  });
  return { hooks, reused };
}

function request(resourceVersion: string, spec = {}) {
  const r = hookRequest(wasmApp().with(spec).build());
  (r.parent.metadata as Record<string, unknown>)['resourceVersion'] = resourceVersion;
  return r;
}

describe('answers from memory', () => {
  it('are reused only for a settled answer of the same object, hook, policy and lattice knowledge', async () => {
    const { memory, state, l } = lattice();
    let policy = fromPolicy(parsePolicy('rules: [{namespaces: ["*"], lattices: ["*"]}]'), 'default');
    const tenancy: Tenancy = { defaultLattice: 'default', rule: 'policy', allows: (n, x) => policy.allows(n, x), revision: () => policy };
    const { hooks, reused } = hooksOver(l, tenancy);
    await hooks.answer('sync', request('1'), SILENT); // deploys: not settled
    memory.setStatus('hello-world', { status: { type: 'deployed' } });
    const settled = await hooks.answer('sync', request('1'), SILENT);
    assert.equal(reused.hits, 0);
    assert.equal(await hooks.answer('sync', request('1'), SILENT), settled, 'the very same answer object');
    assert.equal(reused.hits, 1);

    await hooks.answer('sync', request('2'), SILENT);
    assert.equal(reused.hits, 1, 'another resourceVersion is another object');
    await hooks.answer('sync', request('2'), SILENT);
    assert.equal(reused.hits, 2);

    state.token = {};
    await hooks.answer('sync', request('2'), SILENT);
    assert.equal(reused.hits, 2, 'what is known of the lattice changed');
    state.token = undefined;
    await hooks.answer('sync', request('2'), SILENT);
    await hooks.answer('sync', request('2'), SILENT);
    assert.equal(reused.hits, 2, 'nothing is reused while the lattice is not known to be alive (or NATS is down)');
    state.token = {};
    await hooks.answer('sync', request('2'), SILENT);

    await hooks.answer('sync', request('2'), SILENT);
    policy = fromPolicy(parsePolicy('rules: [{namespaces: ["*"], lattices: ["*"]}]'), 'default');
    await hooks.answer('sync', request('2'), SILENT);
    assert.equal(reused.hits, 3, 'a reloaded policy is a new policy');

    const finalized = JSON.parse((await hooks.answer('finalize', request('2'), SILENT)).json) as { finalized?: boolean };
    assert.equal(finalized.finalized, true, 'another hook is not served from the sync memo');
  });

  it('reuses an answer that needed nothing from the lattice (an invalid spec) whatever the lattice does', async () => {
    const { state, l } = lattice();
    const { hooks, reused } = hooksOver(l, { defaultLattice: 'default', rule: 'policy', allows: () => true });
    const invalid = request('7', { components: [] });
    await hooks.answer('sync', invalid, SILENT);
    state.token = {};
    await hooks.answer('sync', invalid, SILENT);
    assert.equal(reused.hits, 1);
  });

  it('never keeps an answer that asks for a resync', async () => {
    const { memory, l } = lattice();
    const { hooks, reused } = hooksOver(l, { defaultLattice: 'default', rule: 'policy', allows: () => true });
    memory.down = true;
    await hooks.answer('sync', request('1'), SILENT);
    await hooks.answer('sync', request('1'), SILENT);
    assert.equal(reused.hits, 0);
  });
});
