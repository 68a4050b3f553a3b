// Fuzzing the bounded caches: Lru and Knowledge never hold more than their capacity.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Lru } from '../../src/plumbing/lru.js';
import { Knowledge } from '../../src/lattice/knowledge.js';
import { testClock } from '../support/clock.js';
import { checkAfterFuzzing, NOW, property, runs } from '../support/fuzz/run.js';
import { token } from '../support/fuzz/values.js';
import { wadmStatus } from '../support/fuzz/wadm-state.js';

describe('fuzzing the bounded caches', () => {
  type Op = { op: 'set'; key: number; value: number } | { op: 'get'; key: number } | { op: 'delete'; key: number } | { op: 'clear' };
  const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 6, arbitrary: fc.record({ op: fc.constant('set' as const), key: fc.nat(40), value: fc.integer() }) },
    { weight: 4, arbitrary: fc.record({ op: fc.constant('get' as const), key: fc.nat(40) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('delete' as const), key: fc.nat(40) }) },
    { weight: 1, arbitrary: fc.constant({ op: 'clear' as const }) },
  );

  it('Lru never holds more than its capacity and forgets the least recently used entry first', async () => {
    const arbitrary = fc.record({ capacity: fc.integer({ min: 1, max: 16 }), ops: fc.array(op, { maxLength: 300 }) });
    await property('lru: bounded, agrees with a reference model', arbitrary, runs(2000), async ({ capacity, ops }) => {
      const lru = new Lru<number, number>(capacity);
      const model: [number, number][] = []; // least recently used first
      for (const o of ops) {
        const at = 'key' in o ? model.findIndex(([k]) => k === o.key) : -1;
        switch (o.op) {
          case 'set':
            if (at >= 0) model.splice(at, 1);
            model.push([o.key, o.value]);
            if (model.length > capacity) model.shift();
            lru.set(o.key, o.value);
            break;
          case 'get': {
            const expected = at >= 0 ? model.splice(at, 1)[0]! : undefined;
            if (expected) model.push(expected);
            assert.equal(lru.get(o.key), expected?.[1]);
            break;
          }
          case 'delete':
            if (at >= 0) model.splice(at, 1);
            lru.delete(o.key);
            break;
          case 'clear':
            model.length = 0;
            lru.clear();
            break;
        }
        assert.ok(lru.size <= capacity, `size ${lru.size} > capacity ${capacity}`);
        assert.equal(lru.size, model.length);
      }
    });
  });

  it('Knowledge never holds more applications than its capacity', async () => {
    type KnowledgeOp =
      | {
          op: 'status' | 'deployed' | 'lookup' | 'remember' | 'model' | 'forget-model' | 'stamp';
          lattice: string;
          name: string;
          tick: number;
        }
      | { op: 'reset' };
    const knowledgeOp: fc.Arbitrary<KnowledgeOp> = fc.oneof(
      {
        weight: 12,
        arbitrary: fc.record({
          op: fc.constantFrom(
            'status' as const,
            'deployed' as const,
            'lookup' as const,
            'remember' as const,
            'model' as const,
            'forget-model' as const,
            'stamp' as const,
          ),
          lattice: fc.constantFrom('default', 'other', 'x'),
          name: token,
          tick: fc.nat(20_000),
        }),
      },
      { weight: 1, arbitrary: fc.constant({ op: 'reset' as const }) },
    );
    const model = { versions: ['v1'], deployedVersion: null, known: { v1: { version: 'v1', owner: 'default/app', contentHash: null } } };
    const arbitrary = fc.record({
      capacity: fc.integer({ min: 1, max: 20 }),
      ops: fc.array(knowledgeOp, { maxLength: 200 }),
      status: wadmStatus,
    });
    await property('knowledge: bounded', arbitrary, runs(1000), async ({ capacity, ops, status }) => {
      const clock = testClock(NOW);
      const known = new Knowledge({ capacity, modelTtlMs: 5_000, deployGraceMs: 10_000, livenessMs: 5_000, now: clock.now });
      for (const o of ops) {
        if (o.op === 'reset') known.reset();
        else {
          clock.advance(o.tick);
          if (o.op === 'status') known.rememberStatus(o.lattice, o.name, status, o.tick % 2 === 0);
          else if (o.op === 'deployed') known.deployed(o.lattice, o.name);
          else if (o.op === 'lookup') known.status(o.lattice, o.name);
          else if (o.op === 'remember') known.remember(o.lattice, o.name, model, known.checkpoint());
          else if (o.op === 'model') known.model(o.lattice, o.name);
          else if (o.op === 'stamp') known.stamp(o.lattice, o.name);
          else known.forgetModel(o.lattice, o.name);
        }
        assert.ok(known.size <= capacity, `knowledge holds ${known.size} > ${capacity}`);
      }
    });
  });
});

checkAfterFuzzing();
