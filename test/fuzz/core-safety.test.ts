// Fuzzing the hook core for safety: hostile envelopes, mutated specs, deep nesting and long names never make
// it throw, and only single-token NATS subjects reach the lattice.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MemoryLattice } from '../support/memory-lattice.js';
import { hookRequest } from '../support/resources.js';
import { assertNoPrototypePollution, checkAfterFuzzing, outcome, property, runs, SILENT, Tally } from '../support/fuzz/run.js';
import { token } from '../support/fuzz/values.js';
import { anyResource, deepCase, deepText, envelopeCase, envelopeText, HELLO, nested, requestOf } from '../support/fuzz/requests.js';
import { chaos, desiredSeed, seedDesired, seedLattice, seedModels } from '../support/fuzz/wadm-state.js';
import { RecordingLattice } from '../support/fuzz/lattices.js';
import { assertHookResponse, checkHookRequest, hooksFor, respond, TENANCIES, tenancyName, tenancyOf } from '../support/fuzz/hooks.js';

describe('fuzzing the hook core (prepare + decideSync/decideFinalize through createHooks)', () => {
  it('never throws and sends only single-token lattices and names, for hostile hook envelopes', async () => {
    const arbitrary = fc.record({ envelope: envelopeCase, seeds: seedModels, tenancy: tenancyName });
    const tally = new Tally();
    await property('core: hostile envelopes', arbitrary, runs(2000), async ({ envelope, seeds, tenancy }) => {
      const request = JSON.parse(envelopeText(envelope)) as unknown;
      if (!checkHookRequest(request)) return tally.add('not a hook request'); // the server answers 400 before the core sees it
      const memory = new MemoryLattice();
      seedLattice(memory, seeds);
      const recorder = new RecordingLattice(memory, tenancyOf(tenancy), request.parent.metadata.namespace);
      const hooks = hooksFor(recorder, tenancyOf(tenancy));
      const response = await respond(hooks, 'sync', request, SILENT);
      assertHookResponse(response, false);
      tally.add(outcome(response));
      assertHookResponse(await respond(hooks, 'finalize', request, SILENT), true);
      recorder.assertClean();
      assertNoPrototypePollution();
    });
    tally.print('core: hostile envelopes: sync outcomes');
  });

  it('never throws and sends only single-token subjects, for valid specs with a random path replaced, deleted or added', async () => {
    const arbitrary = fc.record({
      resource: anyResource,
      seeds: seedModels,
      desired: desiredSeed,
      tenancy: tenancyName,
      chaos: fc.array(chaos, { maxLength: 2 }),
    });
    const tally = new Tally();
    let calls = 0;
    await property('core: mutated valid specs', arbitrary, runs(3000), async ({ resource, seeds, desired, tenancy, chaos }) => {
      const request = requestOf(resource);
      fc.pre(checkHookRequest(request));
      const memory = new MemoryLattice();
      seedLattice(memory, seeds);
      seedDesired(memory, request, desired);
      memory.scripted.push(...chaos);
      const recorder = new RecordingLattice(memory, tenancyOf(tenancy), resource.namespace);
      const hooks = hooksFor(recorder, tenancyOf(tenancy));
      const response = await respond(hooks, 'sync', request, SILENT);
      assertHookResponse(response, false);
      tally.add(outcome(response));
      assertHookResponse(await respond(hooks, 'finalize', { ...request, finalizing: true }, SILENT), true);
      recorder.assertClean();
      calls += recorder.calls.length;
      assertNoPrototypePollution();
    });
    tally.print('core: mutated valid specs: sync outcomes');
    console.log(`[fuzz] core: mutated valid specs: ${calls} lattice calls checked`);
  });

  it('never throws for values nested thousands of levels deep anywhere in the request', async () => {
    await property('core: deep nesting', deepCase, runs(150), async (c) => {
      const request = JSON.parse(deepText(c)) as unknown;
      assert.ok(checkHookRequest(request), 'the envelope stays a hook request');
      const recorder = new RecordingLattice(new MemoryLattice(), TENANCIES['default-only']!, request.parent.metadata.namespace);
      const hooks = hooksFor(recorder, TENANCIES['default-only']!);
      const response =
        c.hook === 'sync' ? await respond(hooks, 'sync', request, SILENT) : await respond(hooks, 'finalize', request, SILENT);
      assertHookResponse(response, c.hook === 'finalize');
      recorder.assertClean();
    });
  });

  it('never sends a NATS subject longer than a protocol line (4 KB), whatever the length of metadata.name', async () => {
    // Kubernetes limits names to 253 characters, but the hook is an HTTP endpoint anyone who can
    // reach it may call; one such call must not make NATS drop the connection every hook shares.
    const arbitrary = fc.record({
      length: fc.integer({ min: 100, max: 200_000 }),
      hook: fc.constantFrom('sync' as const, 'finalize' as const),
      char: fc.constantFrom('n', '_', '-', '9'),
    });
    await property('core: long names', arbitrary, runs(100), async ({ length, hook, char }) => {
      const request = hookRequest(
        { ...HELLO, metadata: { ...HELLO.metadata, name: char.repeat(length) } },
        { finalizing: hook === 'finalize' },
      );
      const memory = new MemoryLattice();
      // A model under that name exists, so that finalize would go as far as a delete.
      memory.seed(char.repeat(length), [['v1', { owner: `default/${char.repeat(length)}`, contentHash: null }]]);
      const recorder = new RecordingLattice(memory, TENANCIES['default-only']!, 'default');
      const hooks = hooksFor(recorder, TENANCIES['default-only']!);
      assertHookResponse(
        hook === 'sync' ? await respond(hooks, 'sync', request, SILENT) : await respond(hooks, 'finalize', request, SILENT),
        hook === 'finalize',
      );
      recorder.assertClean();
    });
  });
});

checkAfterFuzzing();
