import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { defaultOnly, fromPolicy, parsePolicy } from '../../src/core/tenancy.js';
import { decideFinalize, decideSync } from '../../src/core/decide.js';
import { callOf } from '../../src/core/application.js';
import { MemoryLattice } from '../support/memory-lattice.js';
import { wasmApp, hookRequest } from '../support/resources.js';

const NOW = Date.parse('2026-11-30T12:00:00Z');
const policy = fromPolicy(
  parsePolicy(`
rules:
  - namespaces: [team-a]
    lattices: [team-a, shared]
  - namespaces: ["tenant-*"]
    lattices: ["{namespace}"]
  - namespaces: [platform]
    lattices: ["*"]
`),
  'default',
);

describe('the lattice policy', () => {
  it('allows only DEFAULT_LATTICE when there is no policy file', () => {
    const tenancy = defaultOnly('default');
    assert.equal(tenancy.allows('anyone', 'default'), true);
    assert.equal(tenancy.allows('anyone', 'prod'), false);
  });

  it('grants lattices by namespace name, glob and {namespace}', () => {
    assert.equal(policy.allows('team-a', 'shared'), true);
    assert.equal(policy.allows('team-a', 'team-b'), false);
    assert.equal(policy.allows('team-a', 'default'), false, 'a policy replaces the default-only rule');
    assert.equal(policy.allows('tenant-x', 'tenant-x'), true);
    assert.equal(policy.allows('tenant-x', 'tenant-y'), false);
    assert.equal(policy.allows('platform', 'anything'), true);
    assert.equal(policy.allows('team-ab', 'team-a'), false, 'names match whole, not as prefixes');
  });

  it('refuses a policy file with unknown keys or patterns that are not namespaces', () => {
    assert.throws(() => parsePolicy('rules:\n  - namespaceSelector: {matchLabels: {a: b}}\n    lattices: [x]\n'), /is not a known field/);
    assert.throws(() => parsePolicy('rules:\n  - namespaces: ["a.b"]\n    lattices: [x]\n'), /invalid lattice policy/);
    assert.throws(() => parsePolicy('rules:\n  - namespaces: [a]\n    lattices: ["a.>"]\n'), /invalid lattice policy/);
  });

  it('stalls a resource on a lattice its namespace may not use, with nothing sent to NATS', async () => {
    const lattice = new MemoryLattice();
    const run = await lattice.run(
      decideSync,
      callOf(hookRequest(wasmApp().inNamespace('team-b').inLattice('shared').build()), policy, { now: NOW }),
    );
    assert.deepEqual(run.actions, []);
    const stalled = run.response.status.conditions!.find((c) => c.type === 'Stalled')!;
    assert.equal(stalled.reason, 'LatticeNotAllowed');
    assert.match(stalled.message, /namespace "team-b" may not deploy to lattice "shared"/);
  });

  it('sends nothing to a forbidden lattice on finalize either, and lets the resource go', async () => {
    const lattice = new MemoryLattice();
    const run = await lattice.run(
      decideFinalize,
      callOf(hookRequest(wasmApp().inNamespace('team-b').inLattice('shared').build(), { finalizing: true }), policy, { now: NOW }),
    );
    assert.deepEqual(run.actions, []);
    assert.equal(run.response.finalized, true);
  });
});
