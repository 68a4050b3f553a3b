import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { defaultOnly, fromPolicy, parsePolicy, type Tenancy } from '../../src/core/tenancy.js';
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

describe('the message of LatticeNotAllowed', () => {
  const messageOf = async (decide: typeof decideSync, tenancy: Tenancy, namespace: string, lattice: string) => {
    const parent = wasmApp().inNamespace(namespace).inLattice(lattice).build();
    const run = await new MemoryLattice().run(
      decide,
      callOf(hookRequest(parent, { finalizing: decide === decideFinalize }), tenancy, { now: NOW }),
    );
    const ready = run.response.status.conditions!.find((c) => c.type === 'Ready')!;
    assert.equal(ready.reason, 'LatticeNotAllowed');
    return ready.message;
  };

  it('without a policy file, says only DEFAULT_LATTICE is allowed, which it is, and how to allow more', async () => {
    const message = await messageOf(decideSync, defaultOnly('prod'), 'team-b', 'shared');
    assert.equal(
      message,
      'namespace "team-b" may not deploy to lattice "shared": there is no lattice policy, so only DEFAULT_LATTICE ("prod") is allowed; ' +
        'set spec.lattice to "prod" to use it (without spec.lattice an application stays in the lattice it is in), or ask the platform team to allow "shared" with a lattice policy ' +
        "(LATTICE_POLICY_FILE: the chart's latticePolicy values or the existing-lattice kustomize component)",
    );
    assert.equal(
      await messageOf(decideFinalize, defaultOnly('prod'), 'team-b', 'shared'),
      'Left in wadm: namespace "team-b" may not use lattice "shared": there is no lattice policy, so only DEFAULT_LATTICE ("prod") is allowed',
    );
  });

  it('with a policy, says no rule grants this namespace that lattice, and names no other namespace', async () => {
    for (const decide of [decideSync, decideFinalize]) {
      const message = await messageOf(decide, policy, 'team-b', 'shared');
      assert.match(message, /: no rule of the lattice policy grants namespace "team-b" the lattice "shared"($|;)/);
      for (const other of ['"team-a"', '"tenant-', '"platform"', '"default"'])
        assert.ok(!message.includes(other), `${other} in: ${message}`);
    }
    // The default lattice too is the policy's to grant: with a policy file it is not allowed by itself.
    assert.match(
      await messageOf(decideSync, policy, 'team-b', 'default'),
      /no rule of the lattice policy grants namespace "team-b" the lattice "default"/,
    );
  });

  it('follows a policy file that appears: the rule is read at each call, not kept with the application', async () => {
    let current: Tenancy = defaultOnly('default');
    const tenancy: Tenancy = {
      defaultLattice: 'default',
      get rule() {
        return current.rule;
      },
      allows: (namespace, lattice) => current.allows(namespace, lattice),
    };
    assert.match(await messageOf(decideSync, tenancy, 'team-b', 'shared'), /there is no lattice policy/);
    current = policy;
    assert.match(await messageOf(decideSync, tenancy, 'team-b', 'shared'), /no rule of the lattice policy grants/);
  });
});
