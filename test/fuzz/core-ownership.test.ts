// Fuzzing the hook core for ownership: it never writes to a model another resource owns (or nobody owns, unless
// adopting), and a rollback redeploys the earlier pinned version whatever its name.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ADOPT_ANNOTATION } from '../../src/core/names.js';
import { MemoryLattice } from '../support/memory-lattice.js';
import { hookRequest } from '../support/resources.js';
import { checkAfterFuzzing, outcome, property, runs, SILENT, Tally } from '../support/fuzz/run.js';
import { hostileString, token } from '../support/fuzz/values.js';
import { HELLO, mostlyValid, requestOf } from '../support/fuzz/requests.js';
import { chaos, seedLattice, seedModels } from '../support/fuzz/wadm-state.js';
import { OwnershipGuard } from '../support/fuzz/lattices.js';
import { assertHookResponse, checkHookRequest, hooksFor, respond, TENANCIES, tenancyName, tenancyOf } from '../support/fuzz/hooks.js';

describe('fuzzing the hook core (prepare + decideSync/decideFinalize through createHooks)', () => {
  it('never writes to a model another resource owns, or that nobody owns unless the resource adopts it', async () => {
    const arbitrary = fc.record({
      seeds: seedModels,
      chaos: fc.array(chaos, { maxLength: 3 }),
      tenancy: tenancyName,
      steps: fc.array(fc.record({ resource: mostlyValid, finalize: fc.boolean() }), { minLength: 1, maxLength: 5 }),
    });
    let writes = 0;
    const tally = new Tally();
    await property('core: ownership', arbitrary, runs(1500), async ({ seeds, chaos, tenancy, steps }) => {
      const memory = new MemoryLattice();
      seedLattice(memory, seeds);
      memory.scripted.push(...chaos);
      const guard = new OwnershipGuard(memory);
      const hooks = hooksFor(guard, tenancyOf(tenancy));
      for (const step of steps) {
        const request = requestOf(step.resource, step.finalize);
        if (!checkHookRequest(request)) continue;
        const { name, namespace, annotations } = request.parent.metadata;
        guard.owner = `${namespace}/${name}`;
        guard.adopt = (annotations as Record<string, unknown> | undefined)?.[ADOPT_ANNOTATION] === 'true';
        const response = step.finalize ? await respond(hooks, 'finalize', request, SILENT) : await respond(hooks, 'sync', request, SILENT);
        assertHookResponse(response, step.finalize);
        tally.add(`${step.finalize ? 'finalize' : 'sync'} ${outcome(response)}`);
        assert.deepEqual(guard.violations, []);
      }
      writes += guard.writes;
    });
    console.log(`[fuzz] core: ownership: ${writes} writes checked`);
    tally.print('core: ownership: outcomes');
  });

  it('redeploys an earlier pinned version on rollback, whatever its name (including __proto__ and constructor)', async () => {
    const versionName = fc.oneof(
      token,
      fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', 'v1'),
      hostileString.filter((s) => s.length > 0 && s.length <= 128 && s !== 'latest'),
    );
    const arbitrary = fc
      .record({ first: versionName, second: versionName, description: hostileString })
      .filter(({ first, second }) => first !== second);
    await property('core: pinned rollback', arbitrary, runs(300), async ({ first, second, description }) => {
      const memory = new MemoryLattice();
      const hooks = hooksFor(memory, TENANCIES['default-only']!);
      const a = hookRequest({ ...HELLO, spec: { ...HELLO.spec, version: first } });
      const b = hookRequest({ ...HELLO, spec: { ...HELLO.spec, version: second, description: `${description} (changed)` } });
      for (const request of [a, b]) assert.equal((await respond(hooks, 'sync', request, SILENT)).status.phase, 'Reconciling');
      const rollback = await respond(hooks, 'sync', a, SILENT);
      assert.equal(
        rollback.status.conditions?.[0]?.reason,
        'Progressing',
        `rollback to ${JSON.stringify(first)}: ${rollback.status.message}`,
      );
      assert.equal(memory.model('hello-world')?.deployed, first);
    });
  });
});

checkAfterFuzzing();
