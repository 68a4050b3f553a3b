// Two first puts at the same moment, in the core against the in-memory wadm: both resources read
// the key empty, and wadm adds the later put to the model the earlier one created (wadm 0.21
// server/handlers.rs put_model, one request at a time). The race is made by running the winner's
// whole sync between the loser's reads and its put. The loser notices from wadm's count of
// versions, never deploys, and says why; the winner removes the loser's stray version; both
// answer the same from the same state, whichever replica asks.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { callOf, type Call } from '../../src/core/application.js';
import { decideFinalize, decideSync } from '../../src/core/decide.js';
import type { Action } from '../../src/core/facts.js';
import { runSteps, type Run } from '../../src/core/steps.js';
import { fromPolicy } from '../../src/core/tenancy.js';
import { MemoryLattice } from '../support/memory-lattice.js';
import { hookRequest, wasmApp, type Resource } from '../support/resources.js';

const ANY_LATTICE = fromPolicy({ rules: [{ namespaces: ['*'], lattices: ['*'] }] }, 'default');
const NOW = Date.parse('2026-11-30T12:00:00Z');
const kinds = (actions: Action[]) => actions.map((a) => a.kind);
const reasonOf = (run: Run) => run.response.status.conditions!.find((c) => c.type === 'Ready')!.reason;

const call = (parent: Resource, options: { status?: unknown; finalizing?: boolean } = {}): Call =>
  callOf(hookRequest(parent, options), ANY_LATTICE, { now: NOW });

/** Runs calls against one wadm key: both resources' actions reach the same model, as in wadm. */
class SharedKey {
  readonly memory = new MemoryLattice();
  constructor(readonly key: string) {}

  run(decide: typeof decideSync, c: Call, beforePut?: () => Promise<unknown>): Promise<Run> {
    let pending = beforePut;
    return runSteps(decide, c, async (action) => {
      if (action.kind === 'put' && pending) {
        const other = pending;
        pending = undefined;
        await other();
      }
      return this.memory.performSync(this.key, action);
    });
  }

  get model() {
    return this.memory.model(this.key)!;
  }
}

describe('two first puts of one name in one lattice, from two namespaces', () => {
  const winner = () => wasmApp().inNamespace('team-a').build();
  const loser = () => wasmApp().inNamespace('team-b').build();

  async function raced() {
    const wadm = new SharedKey('hello-world');
    let first: Run | undefined;
    const lost = await wadm.run(decideSync, call(loser()), async () => (first = await wadm.run(decideSync, call(winner()))));
    return { wadm, first: first!, lost };
  }

  it('the loser sees the count, reads afresh, never deploys, and says the model is another namespace’s', async () => {
    const { wadm, first, lost } = await raced();
    assert.deepEqual(kinds(first.actions), ['read-model', 'put', 'deploy']);
    const won = first.response.status.version!;
    const stray = lost.response.status.version!;
    // The put happened; then a fresh read, the oldest version for its owner, and nothing written.
    assert.deepEqual(kinds(lost.actions), ['read-model', 'put', 'read-model', 'read-version']);
    assert.deepEqual(lost.actions[2], { kind: 'read-model', fresh: true });
    assert.equal(lost.facts.raced, true);
    assert.equal(reasonOf(lost), 'OwnershipConflict');
    assert.equal(
      lost.response.status.message,
      `wadm application "hello-world" in lattice "default" belongs to a resource in another namespace; rename this resource or choose another spec.lattice; wadm also holds version "${stray}" of this resource in it, put at the same moment as that application's first version: it is never deployed, and a resource owning that application deletes it when it next syncs`,
    );
    assert.doesNotMatch(lost.response.status.message!, /team-a/);
    assert.deepEqual([...wadm.model.versions.keys()], [won, stray]);
    assert.equal(wadm.model.deployed, won);
  });

  it('any replica of the loser says the same from the same state, and its finalize leaves the model', async () => {
    const { wadm, lost } = await raced();
    const again = await wadm.run(decideSync, call(loser(), { status: lost.response.status }));
    assert.deepEqual(again.facts.writes, []);
    assert.equal(again.response.status.message, lost.response.status.message);
    const fin = await wadm.run(decideFinalize, call(loser(), { finalizing: true, status: lost.response.status }));
    assert.deepEqual(fin.facts.writes, []);
    assert.equal(reasonOf(fin), 'NotOwned');
    assert.equal(wadm.model.versions.size, 2);
  });

  it('the winner removes the stray version at its next sync, and deploys nothing else', async () => {
    const { wadm, first, lost } = await raced();
    const won = first.response.status.version!;
    const next = await wadm.run(decideSync, call(winner(), { status: first.response.status }));
    assert.deepEqual(next.facts.writes, [{ kind: 'delete', version: lost.response.status.version! }]);
    assert.deepEqual([...wadm.model.versions.keys()], [won]);
    assert.equal(wadm.model.deployed, won);
    assert.equal(next.response.status.deployedVersion, won);
    // Cleaned: the loser's answer no longer speaks of a version of its own.
    const after = await wadm.run(decideSync, call(loser(), { status: lost.response.status }));
    assert.equal(reasonOf(after), 'OwnershipConflict');
    assert.doesNotMatch(after.response.status.message!, /also holds/);
  });

  it('the winner whose edit meets a stray learns only that its put happened, reads afresh, and deploys its own', async () => {
    const wadm = new SharedKey('hello-world');
    const first = await wadm.run(decideSync, call(winner()));
    const edited = wasmApp().inNamespace('team-a').described('changed').build();
    const stray: Action = {
      kind: 'put',
      version: 'stray',
      body: JSON.stringify({ metadata: { name: 'hello-world' } }),
      owner: 'team-b/hello-world',
      contentHash: 'other',
      bytes: 40,
      name: 'hello-world',
    };
    const edit = await wadm.run(decideSync, call(edited, { status: first.response.status }), async () =>
      wadm.memory.performSync('hello-world', stray),
    );
    assert.equal(edit.facts.raced, true);
    const version = edit.response.status.version!;
    assert.deepEqual(kinds(edit.actions), ['read-model', 'put', 'read-model', 'read-version', 'deploy']);
    assert.deepEqual([...wadm.model.versions.keys()], [first.response.status.version!, 'stray', version]);
    assert.equal(wadm.model.deployed, version);
  });

  it('a stray in the middle never becomes the oldest: pruning keeps the winner’s first version until the next is known ours', async () => {
    const wadm = new SharedKey('hello-world');
    const owner = 'team-a/hello-world';
    // The winner's edit was put after the stray landed, so a fresh read shows only the newest.
    wadm.memory.seed('hello-world', [
      ['w1', { owner, contentHash: null }],
      ['stray', { owner: 'team-b/hello-world', contentHash: null }],
      ['w2', { owner, contentHash: null }],
      ['w3', { owner, contentHash: null }],
    ]);
    const run = await wadm.run(decideSync, call(wasmApp().inNamespace('team-a').with({ revisionHistoryLimit: 1 }).build()));
    const deletes = run.facts.writes.filter((w) => w.kind === 'delete').map((w) => (w as { version: string }).version);
    assert.equal(deletes[0], 'stray', 'the stray goes first, found when the next-oldest is read');
    assert.equal([...wadm.model.versions.values()][0]!.owner, owner);
  });
});

describe('two first puts under one key from two lattices (`b-c` in `a`, `c` in `a-b`)', () => {
  const inA = () => wasmApp().inLattice('a').named('b-c').inNamespace('tenant').build();
  const inAB = () => wasmApp().inLattice('a-b').named('c').inNamespace('tenant').build();

  it('the loser says NameCollision, not that it owns the model its version sits in; the winner keeps and cleans it', async () => {
    const wadm = new SharedKey('a-b-c');
    let first: Run | undefined;
    const lost = await wadm.run(decideSync, call(inAB()), async () => (first = await wadm.run(decideSync, call(inA()))));
    const won = first!.response.status.version!;
    assert.equal(reasonOf(lost), 'NameCollision');
    assert.match(lost.response.status.message!, /under the key "a-b-c", which already holds an application of another lattice/);
    assert.match(lost.response.status.message!, /wadm also holds version "[^"]+" of this resource in it/);
    assert.doesNotMatch(lost.response.status.message!, /nothing was written|"b-c"/);
    assert.deepEqual(
      lost.facts.writes.map((w) => w.kind),
      ['put'],
    );

    // Its stray carries another name: while it is the newest, wadm would write the winner's model
    // under another key. The winner removes it before anything else.
    const next = await wadm.run(decideSync, call(inA(), { status: first!.response.status }));
    assert.deepEqual(next.facts.writes, [{ kind: 'delete', version: lost.response.status.version! }]);
    assert.deepEqual([...wadm.model.versions.keys()], [won]);
    assert.equal(wadm.model.deployed, won);
  });
});
