// What a replica keeps per application, counted in objects and hidden classes, never in bytes or
// time: each of 10,000 settled applications costs its entries in the answers and in Knowledge,
// and nothing that grows with the applications may be kept elsewhere (docs/benchmarks-history.md:
// memory per application, and the eighth round of issue 15).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { Answers } from '../../src/http/answers.js';
import { NO_FACTS } from '../../src/core/facts.js';
import type { Run } from '../../src/core/steps.js';
import { Knowledge } from '../../src/lattice/knowledge.js';
import type { LatticeStatus, ModelFacts } from '../../src/core/facts.js';
import { wasmApp, hookRequest } from '../support/resources.js';
import { testClock } from '../support/clock.js';

// V8's own answer to "do these two objects share a hidden class?". An object built by spreading
// another and adding fields can get a hidden class of its own (~150 bytes of Map and
// descriptors per object); kept per application, that was a third of the heap they cost.
setFlagsFromString('--allow-natives-syntax');
const sameHiddenClass = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;
setFlagsFromString('--no-allow-natives-syntax');

const APPS = 50;
const names = Array.from({ length: APPS }, (_, i) => `app-${i}`);

function assertOneHiddenClass(objects: object[], what: string): void {
  const distinct = objects.filter((o) => !sameHiddenClass(o, objects[0]!)).length;
  assert.equal(distinct, 0, `${what}: ${distinct} of ${objects.length} have a hidden class of their own`);
}

describe('what a replica keeps per application', () => {
  it('keeps one answers entry per object, its Application sharing one hidden class with every other', () => {
    const answers = new Answers(APPS * 2, 'default', { policy: () => undefined, maxPayloadBytes: () => undefined });
    const requests = names.map((name) => {
      const request = hookRequest(wasmApp().inNamespace('tenant').build());
      request.parent.metadata = { ...request.parent.metadata, name, uid: `uid-${name}`, resourceVersion: '1' };
      return request;
    });
    const kept = requests.map((request) => {
      const app = answers.application(request.parent);
      const consulted = answers.consult('sync', request);
      assert.ok(consulted && !consulted.reused);
      // A settled call that asked wadm nothing: kept without a stamp.
      const run = { response: { status: { phase: 'Deployed' } }, actions: [], facts: NO_FACTS } as unknown as Run;
      return { app, answer: consulted.record(run) };
    });
    assert.equal(answers.size, APPS);
    assertOneHiddenClass(
      kept.map((k) => k.app),
      'Applications',
    );
    // The settled answer, its key and its stamp are one object: what reuse hands back is what was kept.
    assertOneHiddenClass(
      kept.map((k) => k.answer),
      'settled answers',
    );
    requests.forEach((request, i) => assert.equal(answers.consult('sync', request)?.reused, kept[i]!.answer));
  });

  it('keeps one Knowledge entry per application, of one hidden class, its statuses shared or of one hidden class', () => {
    const clock = testClock(0);
    const known = new Knowledge({ capacity: APPS * 2, modelTtlMs: 300_000, deployGraceMs: 10_000, livenessMs: 5_000, now: clock.now });
    known.answered('default');
    for (const name of names) {
      const model: ModelFacts = {
        versions: ['v1'],
        deployedVersion: 'v1',
        known: { v1: { version: 'v1', owner: `tenant/${name}`, contentHash: null } },
      };
      known.remember('default', name, model, known.checkpoint());
      known.deployed('default', name);
      // As JSON.parse makes it from wadm's status message: fresh objects and strings each time.
      const status = JSON.parse(
        JSON.stringify({
          status: { type: 'deployed' },
          scalers: [{ kind: 'SpreadScaler', name: `${name}-http`, id: 'x'.repeat(64), status: { type: 'deployed' } }],
        }),
      ) as LatticeStatus;
      known.rememberStatus('default', name, status, true);
    }
    assert.equal(known.size, APPS);
    assertOneHiddenClass(
      names.map((name) => known.stamp('default', name)!),
      'Knowledge entries',
    );
    const statuses = names.map((name) => known.status('default', name)!.status);
    assertOneHiddenClass(
      statuses.map((s) => s.scalers![0]!),
      'lean scalers',
    );
    const infos = new Set(statuses.flatMap((s) => [s.status, s.scalers![0]!.status]));
    assert.equal(infos.size, 1, 'a status without message is one object for every application');
  });

  it('keeps nothing per lattice asked once its answer is past the liveness window (each first put asks about its own shadowed lattice)', () => {
    const clock = testClock(0);
    const known = new Knowledge({ capacity: APPS, modelTtlMs: 300_000, deployGraceMs: 10_000, livenessMs: 5_000, now: clock.now });
    for (let i = 0; i < 10 * APPS; i++) {
      known.answered(`default-app-${i}`);
      clock.advance(100);
    }
    // 50 answers (5 s at one per 100 ms) are alive; of the 500 lattices, at most a sweep's worth more are kept.
    assert.ok(known.latticesAnswered <= 128, `${known.latticesAnswered} lattices remembered`);
    assert.equal(known.isAlive(`default-app-${10 * APPS - 1}`), true);
    assert.equal(known.isAlive('default-app-0'), false);
  });
});
