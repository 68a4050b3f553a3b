// Fuzzing the hook core for stability: the status fed back is a fixed point, the same request gives the same
// answer whatever came before, and the heap stays bounded while one object is edited again and again.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { type HookRequest } from '../../src/schema/hook.js';
import { applicationOf } from '../../src/core/application.js';
import { testClock } from '../support/clock.js';
import { MemoryLattice } from '../support/memory-lattice.js';
import { hookRequest } from '../support/resources.js';
import { assertFixedPoint, checkAfterFuzzing, exposeGc, NOW, outcome, property, runs, SILENT, Tally, totals } from '../support/fuzz/run.js';
import { clone } from '../support/fuzz/values.js';
import { HELLO, mostlyValid, requestOf } from '../support/fuzz/requests.js';
import { chaos, desiredSeed, seedDesired, seedLattice, seedModels } from '../support/fuzz/wadm-state.js';
import { RecordingLattice } from '../support/fuzz/lattices.js';
import { checkHookRequest, hooksFor, respond, TENANCIES, tenancyName, tenancyOf } from '../support/fuzz/hooks.js';

describe('fuzzing the hook core (prepare + decideSync/decideFinalize through createHooks)', () => {
  it('reaches a fixed point: the status fed back as parent.status gives byte-identical status and no write', async () => {
    const arbitrary = fc.record({
      resource: mostlyValid,
      seeds: seedModels,
      desired: desiredSeed,
      down: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      tenancy: tenancyName,
      advanceMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 10_000, max: 600_000 })),
    });
    const tally = new Tally();
    await property('core: fixed point of status', arbitrary, runs(2000), async ({ resource, seeds, desired, down, tenancy, advanceMs }) => {
      const request = requestOf(resource);
      fc.pre(checkHookRequest(request));
      const memory = new MemoryLattice();
      seedLattice(memory, seeds);
      seedDesired(memory, request, desired);
      memory.down = down;
      const clock = testClock(NOW);
      let lastWrites: unknown[] = [];
      const hooks = hooksFor(memory, tenancyOf(tenancy), clock.now, { onRun: (_hook, run) => (lastWrites = run.facts.writes) });
      const first = await respond(hooks, 'sync', request, SILENT);
      tally.add(`${outcome(first)}${lastWrites.length > 0 ? ' after writes' : ''}`);
      // Metacontroller writes the status, Kubernetes stores it as JSON, the next call carries it.
      const again = { ...request, parent: { ...request.parent, status: JSON.parse(JSON.stringify(first.status)) as unknown } };
      clock.set(NOW + advanceMs);
      const second = await respond(hooks, 'sync', again, SILENT);
      assertFixedPoint(first.status, second.status, advanceMs);
      assert.deepEqual(lastWrites, [], 'a converged resource costs no write');
    });
    tally.print('core: fixed point of status: first outcomes');
  });

  it('is deterministic: the same request on the same lattice gives the same response and actions, and is never mutated', async () => {
    const arbitrary = fc.record({
      resource: mostlyValid,
      seeds: seedModels,
      desired: desiredSeed,
      tenancy: tenancyName,
      chaos: fc.array(chaos, { maxLength: 2 }),
      finalize: fc.boolean(),
    });
    await property('core: determinism', arbitrary, runs(1500), async ({ resource, seeds, desired, tenancy, chaos, finalize }) => {
      const request = requestOf(resource, finalize);
      fc.pre(checkHookRequest(request));
      const text = JSON.stringify(request);
      const once = async () => {
        const memory = new MemoryLattice();
        seedLattice(memory, seeds);
        seedDesired(memory, request, desired);
        memory.scripted.push(...chaos.map((c) => ({ ...c })));
        const recorder = new RecordingLattice(memory, tenancyOf(tenancy), resource.namespace);
        const hooks = hooksFor(recorder, tenancyOf(tenancy));
        const response = finalize ? await respond(hooks, 'finalize', request, SILENT) : await respond(hooks, 'sync', request, SILENT);
        recorder.assertClean();
        return JSON.stringify({
          response,
          calls: recorder.calls,
          app: applicationOf(request.parent, tenancyOf(tenancy).defaultLattice).app,
        });
      };
      assert.equal(await once(), await once());
      assert.equal(JSON.stringify(request), text, 'the request was mutated');
    });
  });

  it('answers a request the same whatever it answered before: no cache carries one request into another', async () => {
    // One identity per uid, as in Kubernetes (name and namespace never change); the spec, labels
    // and generation do, and a spec may come back to an earlier content (a rollback).
    const IDENTITIES: Record<string, { namespace: string; name: string }> = {
      'uid-1': { namespace: 'default', name: 'app' },
      'uid-2': { namespace: 'team-a', name: 'app' },
      'uid-3': { namespace: 'default', name: 'hello-world' },
    };
    const step = fc.record({
      pick: fc.nat(),
      uid: fc.constantFrom(...Object.keys(IDENTITIES), undefined),
      generation: fc.nat(4),
      finalize: fc.boolean(),
    });
    // A few resources, picked again and again, so that the same content comes back.
    const arbitrary = fc.record({
      seeds: seedModels,
      tenancy: tenancyName,
      resources: fc.array(mostlyValid, { minLength: 1, maxLength: 3 }),
      steps: fc.array(step, { minLength: 2, maxLength: 6 }),
    });
    await property('core: history independence', arbitrary, runs(1000), async ({ seeds, tenancy, resources, steps }) => {
      let memory = new MemoryLattice();
      const longLived = hooksFor({ perform: (l, n, a) => memory.perform(l, n, a) }, tenancyOf(tenancy));
      for (const s of steps) {
        const request = requestOf(resources[s.pick % resources.length]!, s.finalize);
        const metadata = request.parent.metadata as Record<string, unknown>;
        Object.assign(metadata, { generation: s.generation, ...(s.uid === undefined ? {} : { uid: s.uid, ...IDENTITIES[s.uid] }) });
        if (s.uid === undefined) delete metadata['uid'];
        if (!checkHookRequest(request)) continue;
        const answer = async (hooks: ReturnType<typeof hooksFor>) => {
          memory = new MemoryLattice();
          seedLattice(memory, seeds);
          return JSON.stringify(
            s.finalize ? await respond(hooks, 'finalize', request, SILENT) : await respond(hooks, 'sync', request, SILENT),
          );
        };
        const fresh = hooksFor({ perform: (l, n, a) => memory.perform(l, n, a) }, tenancyOf(tenancy));
        assert.equal(await answer(longLived), await answer(fresh), `generation ${s.generation} of ${s.uid ?? 'a parent without uid'}`);
      }
    });
  });

  it('keeps the heap bounded while one object is edited again and again (caches keep no old contents)', async () => {
    const gc = exposeGc();
    let memory = new MemoryLattice();
    const hooks = hooksFor({ perform: (l, n, a) => memory.perform(l, n, a) }, TENANCIES['default-only']!);
    const blob = 'x'.repeat(256 * 1024);
    const edit = async (i: number) => {
      memory = new MemoryLattice();
      // The same object (uid) each time: a 256 KB config value, and a description that changes.
      const spec = { ...clone(HELLO.spec), description: `edit ${i}` } as unknown as {
        components: { properties: Record<string, unknown> }[];
      };
      spec.components[0]!.properties['config'] = [{ name: 'cfg', properties: { blob } }];
      const request = hookRequest({ ...HELLO, spec: spec as Record<string, unknown> }, { generation: i });
      await respond(hooks, 'sync', JSON.parse(JSON.stringify(request)) as HookRequest, SILENT);
    };
    for (let i = 1; i <= 10; i++) await edit(i);
    const before = await gc();
    const edits = runs(100);
    for (let i = 11; i < 11 + edits; i++) await edit(i);
    const grown = (await gc()) - before;
    console.log(`[fuzz] core: ${edits} edits of one 256 KB object: heap ${grown >= 0 ? '+' : ''}${(grown / 1024 / 1024).toFixed(1)} MB`);
    totals.push({ title: 'core: repeated edits', cases: edits, failed: grown >= 16 * 1024 * 1024 });
    // Each edit leaves about 0.5 MB (the spec and its rendered manifest) if old contents are kept.
    assert.ok(grown < 16 * 1024 * 1024, `heap grew by ${(grown / 1024 / 1024).toFixed(1)} MB over ${edits} edits of one object`);
  });
});

checkAfterFuzzing();
