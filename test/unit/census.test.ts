// What a lattice's list says of the models a replica remembers (core/census.ts), how Knowledge
// uses a model only while it was read, or its lattice listed, within the check period, and how it
// keeps the list for the applications it has not read (core/summary.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { contradicted, type ListedModel } from '../../src/core/census.js';
import type { ModelFacts } from '../../src/core/facts.js';
import { Knowledge } from '../../src/lattice/knowledge.js';
import { testClock } from '../support/clock.js';

const facts = (versions: string[], deployedVersion: string | null): ModelFacts => ({
  versions,
  deployedVersion,
  known: { [versions.at(-1)!]: { version: versions.at(-1)!, owner: 'default/app', contentHash: 'h' } },
});

describe('contradicted', () => {
  const remembered = new Map([
    ['kept', facts(['v1', 'v2'], 'v2')],
    ['gone', facts(['v1'], 'v1')],
    ['newer', facts(['v1'], 'v1')],
    ['undeployed', facts(['v1'], 'v1')],
    ['redeployed', facts(['v1', 'v2'], 'v2')],
  ]);
  const listed: ListedModel[] = [
    { name: 'kept', version: 'v2', deployed: 'v2' },
    { name: 'newer', version: 'v2', deployed: 'v1' },
    { name: 'undeployed', version: 'v1', deployed: null },
    { name: 'redeployed', version: 'v2', deployed: 'v1' },
    { name: 'someone-elses', version: 'x', deployed: 'x' },
  ];

  it('names the remembered models the list lacks or shows with another newest or deployed version, sorted', () => {
    assert.deepEqual(contradicted(remembered, listed), ['gone', 'newer', 'redeployed', 'undeployed']);
  });

  it('names every remembered model when the list is empty (a store lost whole), and none when nothing is remembered', () => {
    assert.deepEqual(contradicted(remembered, []), ['gone', 'kept', 'newer', 'redeployed', 'undeployed']);
    assert.deepEqual(contradicted(new Map(), listed), []);
  });
});

const PERIOD = 60_000;

function stage() {
  const clock = testClock();
  const knowledge = new Knowledge({
    capacity: 8,
    modelTtlMs: 300_000,
    deployGraceMs: 10_000,
    livenessMs: 5_000,
    checkPeriodMs: PERIOD,
    now: clock.now,
  });
  const remember = (name: string, model: ModelFacts, lattice = 'default') => {
    knowledge.manage(lattice, name);
    knowledge.remember(lattice, name, model, knowledge.checkpoint());
  };
  /** The lattice's list sent now: call what it returns when it arrives. */
  const list = (models: ListedModel[] = [{ name: 'a', version: 'v1', deployed: 'v1', status: { status: { type: 'deployed' } } }]) => {
    const seq = knowledge.listStarted('default');
    return () => knowledge.listed('default', models, clock.now(), seq);
  };
  return { clock, knowledge, remember, list };
}

describe('Knowledge and the check period', () => {
  it('uses a model read within the period, asks for a list past it, and uses it again once the list confirms it', () => {
    const { clock, knowledge, remember } = stage();
    remember('app', facts(['v1'], 'v1'));
    clock.advance(PERIOD - 1);
    assert.ok(knowledge.model('default', 'app'));
    assert.equal(knowledge.needsCheck('default', 'app'), false);
    clock.advance(1);
    assert.equal(knowledge.model('default', 'app'), undefined);
    assert.equal(knowledge.needsCheck('default', 'app'), true);
    knowledge.answered('default');
    assert.equal(knowledge.stamp('default', 'app'), undefined, 'no answer reused past the period either');
    knowledge.checked('default', clock.now(), []);
    assert.deepEqual(knowledge.model('default', 'app')?.versions, ['v1']);
    assert.ok(knowledge.stamp('default', 'app'));
  });

  it('forgets what the list contradicts, and only in its lattice', () => {
    const { clock, knowledge, remember } = stage();
    remember('a', facts(['v1'], 'v1'));
    remember('b', facts(['v1'], 'v1'));
    remember('a', facts(['v1'], 'v1'), 'other');
    clock.advance(PERIOD);
    assert.deepEqual([...knowledge.remembered('default').keys()].sort(), ['a', 'b']);
    knowledge.checked('default', clock.now(), ['a']);
    assert.equal(knowledge.model('default', 'a'), undefined);
    assert.equal(knowledge.needsCheck('default', 'a'), false, 'nothing remembered: the next read asks wadm');
    assert.ok(knowledge.model('default', 'b'));
    assert.equal(knowledge.needsCheck('other', 'a'), true, "another lattice's models wait for its own list");
  });

  it('drops the status, deploy and announcement of a model a read found absent', () => {
    const { knowledge, remember } = stage();
    remember('app', facts(['v1'], 'v1'));
    knowledge.forgetModel('default', 'app', 'v1'); // wadm announced the deploy of v1…
    knowledge.rememberStatus('default', 'app', { status: { type: 'deployed' } }, true); // …then published its status
    knowledge.deployed('default', 'app');
    assert.equal(knowledge.status('default', 'app')?.followsDeployOf, 'v1');
    knowledge.absent('default', 'app');
    assert.equal(knowledge.status('default', 'app'), undefined, 'what wadm said of a model it no longer has speaks of no redeploy');
    knowledge.deployed('default', 'app');
    const after = knowledge.rememberStatus('default', 'app', { status: { type: 'reconciling' } }, false);
    assert.equal(after.followsDeployOf, undefined);
  });

  it('keeps, after a call wadm stopped answering, the facts of the versions named by their content it put or replaces, until a read finds no model', () => {
    const { knowledge, remember } = stage();
    const version = (hash: string) => ({ version: `sha-${hash.slice(0, 16)}`, owner: 'default/app', contentHash: hash, bytes: 100 });
    const [v1, v2] = [version('1'.repeat(64)), version('2'.repeat(64))];
    remember('app', { versions: [v1.version], deployedVersion: v1.version, known: { [v1.version]: v1 } });
    // An edit: the model forgotten when its deploy went unanswered, after the put of v2 landed.
    knowledge.remember('default', 'app', undefined, Infinity);
    const put: ModelFacts = { versions: [v1.version, v2.version], deployedVersion: v1.version, known: { [v2.version]: v2 } };
    knowledge.rememberSizes('default', 'app', put);
    assert.equal(knowledge.model('default', 'app'), undefined, 'the model itself is forgotten');
    assert.deepEqual(knowledge.versionFacts('default', 'app', v2.version), v2, 'the version it put');
    assert.deepEqual(knowledge.versionFacts('default', 'app', v1.version), v1, 'the version its deploy replaces');
    knowledge.absent('default', 'app');
    assert.equal(knowledge.versionFacts('default', 'app', v2.version), undefined);
    assert.equal(knowledge.versionFacts('default', 'app', v1.version), undefined);
  });

  it('confirms nothing of a lattice listed before a reset, or whose subscriptions are down', () => {
    const { clock, knowledge, remember } = stage();
    remember('app', facts(['v1'], 'v1'));
    clock.advance(PERIOD);
    knowledge.watching('default', false);
    knowledge.checked('default', clock.now(), []);
    knowledge.watching('default', true);
    remember('app', facts(['v1'], 'v1'));
    clock.advance(PERIOD);
    assert.equal(knowledge.needsCheck('default', 'app'), true, 'the list taken while unwatched confirmed nothing');
  });
});

describe("Knowledge keeps a lattice's list for the applications it has not read (core/summary.ts)", () => {
  it('gives each application its line once, with its status, and keeps it as the summary', () => {
    const { knowledge, list } = stage();
    knowledge.answered('default');
    list()();
    knowledge.manage('default', 'a');
    assert.deepEqual(knowledge.takeSummary('default', 'a'), { version: 'v1', deployed: 'v1' });
    assert.equal(knowledge.takeSummary('default', 'a'), null, 'taken once');
    assert.deepEqual(knowledge.summary('default', 'a'), { version: 'v1', deployed: 'v1' });
    assert.deepEqual(knowledge.status('default', 'a')?.status, { status: { type: 'deployed' } });
    assert.equal(knowledge.takeSummary('default', 'b'), null, 'not named by the list');
    assert.ok(knowledge.stamp('default', 'a'), 'an answer from it may be reused');
  });

  it("keeps a status this replica heard on wadm's stream: the list's says less (no evidence of when it was published)", () => {
    const { knowledge, list } = stage();
    knowledge.manage('default', 'a');
    knowledge.deployed('default', 'a');
    knowledge.rememberStatus('default', 'a', { status: { type: 'deployed' } }, true);
    list([{ name: 'a', version: 'v1', deployed: 'v1', status: { status: { type: 'reconciling' } } }])();
    assert.deepEqual(knowledge.takeSummary('default', 'a'), { version: 'v1', deployed: 'v1' });
    assert.equal(knowledge.status('default', 'a')?.followsOwnDeploy, true);
    assert.deepEqual(knowledge.status('default', 'a')?.status, { status: { type: 'deployed' } });
  });

  it('drops the line of an application an event touched, also while the list was on its way', () => {
    for (const event of [
      (k: Knowledge) => k.rememberStatus('default', 'a', { status: { type: 'failed' } }, true),
      (k: Knowledge) => k.forgetModel('default', 'a', 'v2'),
    ]) {
      const during = stage();
      const arrive = during.list();
      event(during.knowledge);
      arrive();
      assert.equal(during.knowledge.takeSummary('default', 'a'), null, 'touched while listing');
      const after = stage();
      after.list()();
      event(after.knowledge);
      assert.equal(after.knowledge.takeSummary('default', 'a'), null, 'touched after');
    }
  });

  it('forgets the list after its period, the summary with the model on a deploy announced, and both on a new connection', () => {
    const { clock, knowledge, list } = stage();
    list()();
    clock.advance(PERIOD);
    assert.equal(knowledge.takeSummary('default', 'a'), undefined, 'a list of the last period says nothing now');
    list()();
    knowledge.takeSummary('default', 'a');
    knowledge.forgetModel('default', 'a', 'v2');
    assert.equal(knowledge.summary('default', 'a'), undefined);
    list([{ name: 'a', version: 'v2', deployed: 'v2' }])();
    knowledge.reset();
    assert.equal(knowledge.takeSummary('default', 'a'), undefined);
  });

  it('is checked against the next list as a model is: a summary the list contradicts is forgotten', () => {
    const { clock, knowledge, list } = stage();
    list()();
    knowledge.takeSummary('default', 'a');
    clock.advance(PERIOD);
    assert.equal(knowledge.needsCheck('default', 'a'), true);
    assert.deepEqual([...knowledge.remembered('default')], [['a', { versions: ['v1'], deployedVersion: 'v1' }]]);
    knowledge.checked('default', clock.now(), ['a']);
    assert.equal(knowledge.summary('default', 'a'), undefined);
  });
});
