// wadm keeps every version of a model in one KV value bounded by NATS's max_payload. Before a put
// the core adds up what wadm would store and deletes the oldest versions it may (never the
// deployed one) so that the new one fits; when even the deployed version and the new one cannot
// fit it puts nothing and says ModelTooLarge. In memory here; the real wadm in test/lattice/lattices-e2e.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { callOf } from '../../src/core/application.js';
import { modelBudget, roomForPut, storedBytes } from '../../src/core/budget.js';
import { decideSync } from '../../src/core/decide.js';
import type { Action, ActionResult, ModelFacts } from '../../src/core/facts.js';
import { defaultOnly } from '../../src/core/tenancy.js';
import { createHooks } from '../../src/sync.js';
import { Knowledge } from '../../src/lattice/knowledge.js';
import pino from 'pino';
import { testClock } from '../support/clock.js';
import { MemoryLattice } from '../support/memory-lattice.js';
import { wasmApp, hookRequest, type Resource } from '../support/resources.js';

const NOW = Date.parse('2026-11-30T12:00:00Z');
const MIB = 1024 * 1024;
const OWNER = 'default/hello-world';

function model(versions: [string, number, string | null][], deployed: string | null): ModelFacts {
  const known = Object.fromEntries(versions.map(([version, bytes, owner]) => [version, { version, owner, contentHash: null, bytes }]));
  return { versions: versions.map(([v]) => v), deployedVersion: deployed, known };
}

const newcomer = (bytes: number, revisionHistoryLimit = 10) => ({ version: 'new', bytes, owner: OWNER, revisionHistoryLimit });

describe('what wadm stores of a model (budget.ts)', () => {
  it('counts exactly the bytes of the value wadm writes: every version under its name, and the deployed one', () => {
    const manifests = { 'sha-1': { a: 'x'.repeat(100) }, v2: { b: ['é', 1, null] } };
    for (const deployed of [null, 'v2']) {
      const value = JSON.stringify({ manifests, deployed_version: deployed });
      const versions = Object.entries(manifests).map(([version, m]) => ({ version, bytes: Buffer.byteLength(JSON.stringify(m)) }));
      assert.equal(storedBytes(versions, deployed), Buffer.byteLength(value));
    }
    assert.equal(storedBytes([], null), Buffer.byteLength(JSON.stringify({ manifests: {}, deployed_version: null })));
  });

  it('leaves room under max_payload for wadm re-serialising what it stores', () => {
    assert.equal(modelBudget(MIB), MIB - 16_384 - 2048);
  });

  it('fits, learns an unknown size first, or deletes the oldest version that is neither deployed nor the owner proof', () => {
    assert.deepEqual(roomForPut(null, newcomer(500_000), MIB), { fits: true });
    assert.deepEqual(
      roomForPut(model([['v1', 1000, OWNER]], 'v1'), newcomer(1000), undefined),
      { fits: true },
      'max_payload unknown: not connected, no put anyway',
    );
    assert.deepEqual(
      roomForPut(
        model(
          [
            ['v1', 400_000, OWNER],
            ['v2', 400_000, OWNER],
          ],
          'v2',
        ),
        newcomer(100_000),
        MIB,
      ),
      { fits: true },
    );
    const unknown = model(
      [
        ['v1', 400_000, OWNER],
        ['v2', 400_000, OWNER],
      ],
      'v2',
    );
    delete (unknown.known as Record<string, unknown>)['v1'];
    assert.deepEqual(roomForPut(unknown, newcomer(100_000), MIB), { read: 'v1' });
    assert.deepEqual(
      roomForPut({ ...unknown, sizes: { v1: 400_000 } }, newcomer(100_000), MIB),
      { fits: true },
      'a size this replica remembers will do',
    );
    assert.deepEqual(
      roomForPut(
        model(
          [
            ['v1', 400_000, OWNER],
            ['v2', 400_000, OWNER],
          ],
          'v1',
        ),
        newcomer(300_000),
        MIB,
      ),
      { prune: 'v2' },
      'the deployed one stays',
    );
  });

  it('keeps our newest version when the deployed one is not ours, so that the model stays ours', () => {
    const m = model(
      [
        ['v1', 300_000, OWNER],
        ['v2', 300_000, OWNER],
        ['w1', 300_000, 'other/app'],
      ],
      'w1',
    );
    assert.deepEqual(roomForPut(m, newcomer(300_000), MIB), { prune: 'v1' });
    const tight = model(
      [
        ['v2', 300_000, OWNER],
        ['w1', 300_000, 'other/app'],
      ],
      'w1',
    );
    assert.ok('tooLarge' in roomForPut(tight, newcomer(500_000), MIB));
  });

  it('says how large the least it could store is when even that does not fit', () => {
    const room = roomForPut(
      model(
        [
          ['v1', 100, OWNER],
          ['v2', 600_000, OWNER],
        ],
        'v2',
      ),
      newcomer(500_000),
      MIB,
    );
    assert.ok('tooLarge' in room);
    assert.equal(room.tooLarge.limit, modelBudget(MIB));
    assert.equal(
      room.tooLarge.bytes,
      storedBytes(
        [
          { version: 'v2', bytes: 600_000 },
          { version: 'new', bytes: 500_000 },
        ],
        'v2',
      ),
    );
  });

  it('thins out a model past revisionHistoryLimit before reading sizes', () => {
    const m = model(
      [
        ['v1', 10, OWNER],
        ['v2', 10, OWNER],
        ['v3', 10, OWNER],
      ],
      'v3',
    );
    delete (m.known as Record<string, unknown>)['v1'];
    assert.deepEqual(roomForPut(m, newcomer(10, 2), MIB), { prune: 'v1' });
  });
});

describe('edits of a large manifest through the hook core', () => {
  const sync = (lattice: MemoryLattice, parent: Resource, status?: unknown) =>
    lattice.run(decideSync, callOf(hookRequest(parent, { status }), defaultOnly('default'), { now: NOW, maxPayloadBytes: MIB }));

  it('deploys every edit, deleting old versions first so that what wadm stores never passes the budget', async () => {
    const lattice = new MemoryLattice();
    let status: unknown;
    for (let edit = 0; edit < 12; edit++) {
      const run = await sync(lattice, wasmApp().withLargeConfig(edit).build(), status);
      status = run.response.status;
      assert.equal(run.response.status.deployedVersion, run.response.status.version, `edit ${edit}: ${run.response.status.message}`);
      const stored = lattice.model('hello-world')!;
      const size = storedBytes(
        [...stored.versions].map(([version, v]) => ({ version, bytes: v.bytes! })),
        stored.deployed,
      );
      assert.ok(size <= modelBudget(MIB), `edit ${edit}: ${size} bytes stored`);
      const kinds = run.actions.map((a) => a.kind);
      // Deletes come before the put: wadm would never answer a put past max_payload.
      if (kinds.includes('delete')) assert.ok(kinds.indexOf('delete') < kinds.indexOf('put'), kinds.join(','));
    }
    assert.equal(lattice.model('hello-world')!.versions.size, 9, 'nine versions of ~110 KB fit in 1 MiB');
  });

  it('puts nothing and says ModelTooLarge, with both sizes, when the deployed version and the new one cannot fit', async () => {
    const lattice = new MemoryLattice();
    const first = await sync(lattice, wasmApp().withLargeConfig(0, 600_000).build());
    const run = await sync(lattice, wasmApp().withLargeConfig(1, 500_000).build(), first.response.status);
    const ready = run.response.status.conditions!.find((c) => c.type === 'Ready')!;
    assert.equal(ready.reason, 'ModelTooLarge');
    assert.equal(run.response.status.conditions!.find((c) => c.type === 'Stalled')?.status, 'True');
    assert.match(
      ready.message,
      /the deployed version sha-\w+ and version sha-\w+ would take \d+ bytes, more than the \d+ bytes that the NATS server's max_payload of 1048576 bytes leaves/,
    );
    assert.ok(!run.actions.some((a) => a.kind === 'put' || a.kind === 'delete'), 'nothing written');
    assert.equal(run.response.status.deployedVersion, first.response.status.version);
    assert.equal(lattice.model('hello-world')!.versions.size, 1);
  });
});

describe('sizes read by a call that wadm stopped answering', () => {
  it('are kept, so that the retry does not read the same versions again (a slow wadm would never let one finish)', async () => {
    const clock = testClock();
    const memory = new MemoryLattice();
    const kept: [string, { owner: string; contentHash: null; bytes: number }][] = ['v1', 'v2', 'v3'].map((v) => [
      v,
      { owner: OWNER, contentHash: null, bytes: 1000 },
    ]);
    memory.seed('hello-world', kept, 'v3');
    const knowledge = new Knowledge({ capacity: 8, modelTtlMs: 60_000, deployGraceMs: 10_000, livenessMs: 5_000, now: clock.now });
    const actions: string[] = [];
    // As lattice/gateway.ts: the sizes and the oldest version this replica knows go with every
    // model read; the put times out.
    const perform = async (lattice: string, name: string, action: Action): Promise<ActionResult> => {
      actions.push(action.kind);
      if (action.kind === 'put') return { kind: 'unavailable', reason: 'Timeout', message: 'no reply within 1500 ms' };
      if (action.kind === 'read-model') knowledge.manage(lattice, name);
      const result = await memory.perform(lattice, name, action);
      const sizes = knowledge.sizes(lattice, name);
      const origin = knowledge.origin(lattice, name);
      if (result.kind !== 'model' || !result.model) return result;
      const known =
        origin?.version === result.model.versions[0] ? { ...result.model.known, [origin!.version]: origin! } : result.model.known;
      return { kind: 'model', model: { ...result.model, known, ...(sizes && { sizes }) } };
    };
    const hooks = createHooks({
      lattice: { perform, knowledge, maxPayloadBytes: () => MIB },
      tenancy: defaultOnly('default'),
      budgetMs: 5_000,
      now: clock.now,
      cacheEntries: 8,
    });
    const sync = async () => {
      actions.length = 0;
      await hooks.run('sync', hookRequest(wasmApp().build()), pino({ level: 'silent' }));
      return actions.join(' ');
    };
    assert.equal(await sync(), 'read-model read-version read-version put');
    // Neither v1 (the oldest, whose owner annotation says whose the model is) nor v2 is read again.
    assert.equal(await sync(), 'read-model put', 'v1 and v2 were read once, by the call that timed out');
  });
});
