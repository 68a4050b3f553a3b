// The name-collision check against a model of wadm 0.21's key scheme (server/storage.rs): one KV
// bucket, a model under `<lattice>-<name>`, a lattice's index under `<lattice>`. Generated
// lattices and names are made of `a`, `b` and `-`, so keys collide often. The hook's core runs
// against that KV the way the gateway would answer from it; every pair whose key is taken is
// refused with nothing written, every other pair is put.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { callOf } from '../../src/core/application.js';
import { keySharers, modelKey, squatter } from '../../src/core/collisions.js';
import { decideFinalize, decideSync } from '../../src/core/decide.js';
import { learn, NO_FACTS, type Action, type ActionResult, type LatticeFacts } from '../../src/core/facts.js';
import { fromPolicy } from '../../src/core/tenancy.js';
import { runSteps } from '../../src/core/steps.js';
import { Knowledge } from '../../src/lattice/knowledge.js';
import { wasmApp, hookRequest } from '../support/resources.js';

const ANY_LATTICE = fromPolicy({ rules: [{ namespaces: ['*'], lattices: ['*'] }] }, 'default');
const NOW = Date.parse('2026-11-30T12:00:00Z');

type Entry = { kind: 'model'; lattice: string; name: string; versions: string[] } | { kind: 'index'; names: Set<string> };

/** wadm's KV as storage.rs writes it: put stores the model, then adds its name to the lattice index. */
class KeyValueWadm {
  readonly kv = new Map<string, Entry>();
  readonly writes: string[] = [];

  /** Returns false where wadm would answer "Internal storage error" (a key holding the other kind). */
  put(lattice: string, name: string, version: string): boolean {
    const key = `${lattice}-${name}`;
    const stored = this.kv.get(key);
    if (stored?.kind === 'index') return false;
    if (stored && stored.name !== name) return false; // never reached by the checked hook: see the property
    const index = this.kv.get(lattice);
    if (index?.kind === 'model') return false;
    this.kv.set(key, { kind: 'model', lattice, name, versions: [...(stored?.versions ?? []), version] });
    this.kv.set(lattice, { kind: 'index', names: new Set([...(index?.names ?? []), name]) });
    this.writes.push(key);
    return true;
  }

  /** What the gateway reports for an action of application `name` in `lattice`. */
  perform(lattice: string, name: string, action: Action): ActionResult {
    const storageError: ActionResult = { kind: 'unavailable', reason: 'StorageError', message: 'Internal storage error' };
    switch (action.kind) {
      case 'read-model': {
        const stored = this.kv.get(`${lattice}-${name}`);
        if (!stored) return { kind: 'model', model: null };
        if (stored.kind === 'index') return storageError;
        const newest = stored.versions[stored.versions.length - 1]!;
        return {
          kind: 'model',
          model: {
            versions: stored.versions,
            deployedVersion: null,
            known: { [newest]: { version: newest, owner: 'elsewhere/app', contentHash: null } },
            storedName: stored.name,
          },
        };
      }
      case 'read-list': {
        // wadm reads the lattice's index key as a list of names: a model there is a storage error.
        const stored = this.kv.get(action.of);
        if (stored?.kind === 'model') return storageError;
        return { kind: 'listed', any: (stored?.names.size ?? 0) > 0 };
      }
      case 'read-key': {
        const key = modelKey(action.key);
        const stored = this.kv.get(key);
        return { kind: 'key', key, holds: stored === undefined ? 'nothing' : stored.kind };
      }
      case 'put':
        return this.put(lattice, name, action.version) ? { kind: 'done' } : storageError;
      case 'deploy':
        return { kind: 'done' };
      default:
        throw new Error(`not modelled: ${action.kind}`);
    }
  }

  /** Whether writing (lattice, name) would overwrite or corrupt another entry: the truth the hook must match. */
  takenBy(lattice: string, name: string): boolean {
    const stored = this.kv.get(`${lattice}-${name}`);
    const ownIndex = this.kv.get(lattice);
    return (stored !== undefined && (stored.kind === 'index' || stored.name !== name)) || ownIndex?.kind === 'model';
  }
}

const segment = fc.stringMatching(/^[ab]{1,2}$/);
const dashed = fc.array(segment, { minLength: 1, maxLength: 3 }).map((parts) => parts.join('-'));
const pair = fc.record({ lattice: dashed, name: dashed });

async function syncIn(wadm: KeyValueWadm, lattice: string, name: string) {
  const call = callOf(hookRequest(wasmApp().inLattice(lattice).named(name).inNamespace('tenant').unannotated().build()), ANY_LATTICE, {
    now: NOW,
  });
  return runSteps(decideSync, call, (action) => Promise.resolve(wadm.perform(lattice, name, action)));
}

const reasonOf = (facts: { response: { status: { conditions?: { type: string; reason: string }[] } } }) =>
  facts.response.status.conditions!.find((c) => c.type === 'Ready')!.reason;

describe('name collisions in a model of wadm 0.21 keys', () => {
  it('refuses exactly the pairs whose key or lattice index is taken, and writes nothing for them', async () => {
    const property = fc.asyncProperty(fc.array(pair, { maxLength: 6 }), pair, async (existing, candidate) => {
      const wadm = new KeyValueWadm();
      for (const e of existing) if (!wadm.takenBy(e.lattice, e.name)) wadm.put(e.lattice, e.name, 'v1');
      const stored = wadm.kv.get(modelKey(candidate));
      // Our own model already there is ownership's question (ownership.test.ts), not a collision.
      fc.pre(!(stored?.kind === 'model' && stored.lattice === candidate.lattice && stored.name === candidate.name));
      const collides = wadm.takenBy(candidate.lattice, candidate.name);
      const writesBefore = wadm.writes.length;
      const run = await syncIn(wadm, candidate.lattice, candidate.name);
      const facts: LatticeFacts = run.facts;
      if (collides) {
        assert.equal(reasonOf(run), 'NameCollision', JSON.stringify(run.response.status));
        assert.equal(wadm.writes.length, writesBefore);
        assert.deepEqual(facts.writes, []);
      } else {
        assert.deepEqual(
          facts.writes.map((w) => w.kind),
          ['put', 'deploy'],
          JSON.stringify(run.response.status),
        );
      }
    });
    await fc.assert(property, { seed: 1101, numRuns: 400 });
  });

  it('lists the pairs sharing a key: every split of the key at a `-` but ours', () => {
    assert.deepEqual(keySharers({ lattice: 'kx', name: 'y-z' }), [{ lattice: 'kx-y', name: 'z' }]);
    assert.deepEqual(keySharers({ lattice: 'a-b', name: 'c-d' }), [
      { lattice: 'a', name: 'b-c-d' },
      { lattice: 'a-b-c', name: 'd' },
    ]);
    assert.deepEqual(keySharers({ lattice: 'ab', name: 'cd' }), []);
  });

  it('refuses a name that would shadow a lattice the policy names literally, before asking anything else', async () => {
    const policy = fromPolicy({ rules: [{ namespaces: ['*'], lattices: ['ks', 'ks-web'] }] }, 'default');
    const call = callOf(hookRequest(wasmApp().inLattice('ks').named('web').inNamespace('tenant').unannotated().build()), policy, {
      now: NOW,
    });
    const wadm = new KeyValueWadm();
    const run = await runSteps(decideSync, call, (action) => Promise.resolve(wadm.perform('ks', 'web', action)));
    assert.equal(reasonOf(run), 'NameCollision');
    assert.match(run.response.status.message!, /reserved by the lattice policy for the list of applications of lattice "ks-web"/);
    assert.deepEqual(wadm.writes, []);
  });
});

describe("finalize of a resource whose key holds another lattice's model", () => {
  // Lattice kq holds y-z (made outside Kubernetes, no owner); resource z in lattice kq-y shares its
  // key kq-y-z. Adopting would make any unowned model "ours": the stored name must be checked first.
  const adopting = () => {
    return wasmApp()
      .inLattice('kq-y')
      .named('z')
      .inNamespace('tenant')
      .unannotated()
      .annotated({ 'core.wasmcloud.com/adopt': 'true' })
      .build();
  };
  const holdsYz = (): ActionResult => ({
    kind: 'model',
    model: { versions: ['v1'], deployedVersion: 'v1', known: { v1: { version: 'v1', owner: null, contentHash: null } }, storedName: 'y-z' },
  });

  it('is refused at sync, and its finalize deletes nothing and names nothing of the other lattice', async () => {
    const sent: Action[] = [];
    const perform = (action: Action) => (
      sent.push(action),
      Promise.resolve(action.kind === 'read-model' ? holdsYz() : ({ kind: 'done' } as ActionResult))
    );
    const sync = await runSteps(decideSync, callOf(hookRequest(adopting()), ANY_LATTICE, { now: NOW }), perform);
    assert.equal(reasonOf(sync), 'NameCollision');
    const fin = await runSteps(
      decideFinalize,
      callOf(hookRequest(adopting(), { finalizing: true, status: sync.response.status }), ANY_LATTICE, { now: NOW }),
      perform,
    );
    assert.deepEqual(
      sent.map((a) => a.kind),
      ['read-model', 'read-model'],
    );
    assert.equal(fin.response.finalized, true);
    assert.equal(reasonOf(fin), 'NotOwned');
    assert.doesNotMatch(fin.response.status.message!, /"y-z"|lattice "kq"/);
  });
});

describe('a storage error reading our own key', () => {
  const storageError: ActionResult = { kind: 'unavailable', reason: 'StorageError', message: 'Internal storage error' };
  /** wadm's KV with lattice se-hello-world's index under our key, holding `names`. */
  const runWith = (results: Partial<Record<Action['kind'], ActionResult>>, names: string[] = ['site']) => {
    const call = callOf(hookRequest(wasmApp().inLattice('se').build()), ANY_LATTICE, { now: NOW });
    const base = new KeyValueWadm();
    base.kv.set('se-hello-world', { kind: 'index', names: new Set(names) });
    return runSteps(decideSync, call, (action) => Promise.resolve(results[action.kind] ?? base.perform('se', 'hello-world', action)));
  };

  it('is a NameCollision once lattice "se-hello-world" lists applications: its list is what the key holds', async () => {
    const run = await runWith({});
    assert.equal(reasonOf(run), 'NameCollision');
    assert.match(run.response.status.message!, /list of applications of lattice "se-hello-world"/);
    assert.equal(run.response.resyncAfterSeconds, undefined);
    assert.deepEqual(run.actions, [{ kind: 'read-model' }, { kind: 'read-list', of: 'se-hello-world' }]);
  });

  it('is LatticeUnavailable when that lattice lists nothing (an emptied list and a failing store look alike), and says what to rename if it lasts', async () => {
    const run = await runWith({}, []);
    assert.equal(reasonOf(run), 'LatticeUnavailable');
    assert.ok(run.response.resyncAfterSeconds! > 0);
    assert.match(run.response.status.message!, /lattice "se-hello-world" lists no applications, so nothing shows that the key is its list/);
    assert.match(run.response.status.message!, /if this lasts while wadm answers other lattices, .*rename this resource/);
    assert.deepEqual(run.facts.writes, []);
  });

  for (const [what, failure] of [
    [
      'refused by NATS (a user granted only its lattices)',
      { reason: 'NotPermitted', message: 'NATS refused this service\'s user to publish to "wadm.api.se-hello-world.model.get"' },
    ],
    ['failing too (the whole store is down)', { reason: 'StorageError', message: 'Internal storage error' }],
    ['unanswered', { reason: 'Timeout', message: 'wadm did not answer' }],
  ] as const) {
    it(`is LatticeUnavailable, saying what could not be checked, when that list read is ${what}`, async () => {
      const run = await runWith({ 'read-model': storageError, 'read-list': { kind: 'unavailable', ...failure } });
      assert.equal(reasonOf(run), 'LatticeUnavailable');
      assert.equal(run.response.status.conditions!.find((c) => c.type === 'Ready')!.status, 'Unknown');
      assert.ok(run.response.resyncAfterSeconds! > 0);
      const message = run.response.status.message!;
      assert.match(
        message,
        /^Cannot reach wadm for lattice "se" \(StorageError\): wadm answered "Internal storage error" reading the key "se-hello-world"/,
      );
      assert.ok(
        message.includes(
          `whether the key is lattice "se-hello-world"'s list of applications could not be checked (${failure.reason}: ${failure.message})`,
        ),
        message,
      );
      assert.deepEqual(run.facts.writes, []);
    });
  }

  it('of a write (a compare-and-set race can be): LatticeUnavailable, retried soon, and no list read', async () => {
    const run = await runWith({ 'read-model': { kind: 'model', model: null }, deploy: storageError });
    assert.equal(reasonOf(run), 'LatticeUnavailable');
    assert.ok(!run.actions.some((a) => a.kind === 'read-list'));
  });
});

describe('our own put, remembered as the oldest version', () => {
  it("carries the manifest's name, so a model whose newest version was another lattice's stray is still ours once that stray is gone", () => {
    // The race of a first put: our put, then another lattice's put under the same key. wadm
    // returned the stray's name with the model; once the stray is deleted, only our own put's
    // facts tell what the key holds, and they must say our name.
    const put: Action = { kind: 'put', version: 'v1', body: '{}', owner: 'tenant/b-c', contentHash: 'h', bytes: 2, name: 'b-c' };
    const afterPut = learn(NO_FACTS, put, { kind: 'done', versions: 1 });
    assert.equal(afterPut.model?.known['v1']?.name, 'b-c');
    const strayGone = { ...afterPut.model!, storedName: 'c' };
    assert.equal(squatter({ lattice: 'rb', name: 'b-c' }, strayGone), undefined);
    assert.deepEqual(squatter({ lattice: 'rb', name: 'b-c' }, { ...strayGone, known: {}, versions: ['v1'] }), {
      kind: 'model',
      key: 'rb-b-c',
    });
  });
});
