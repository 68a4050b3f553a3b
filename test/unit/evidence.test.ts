// One answer per state, whichever replica answers and whenever it started (core/evidence.ts):
// after a deploy, wadm's latest status may still be the previous version's, and only the replica
// that deployed remembers it. Two replicas with real hooks and Knowledge over one wadm in memory;
// wadm publishes a status only when a test says so, and each replica hears it as watch.ts passes
// it on. Time is a test clock.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import type { Call } from '../../src/core/application.js';
import { awaitingReport, CLOCK_MARGIN_MS, DEPLOY_GRACE_MS, REPORT_WAIT_MS } from '../../src/core/evidence.js';
import type { Action, ActionResult, LatticeStatus, StatusFacts } from '../../src/core/facts.js';
import { fromPolicy, parsePolicy } from '../../src/core/tenancy.js';
import { createHooks } from '../../src/sync.js';
import { Knowledge } from '../../src/lattice/knowledge.js';
import type { ApplicationStatus } from '../../src/schema/status.js';
import { testClock, TEST_EPOCH, type TestClock } from '../support/clock.js';
import { MemoryLattice } from '../support/memory-lattice.js';
import { hookRequest, wasmApp } from '../support/resources.js';

const SILENT = pino({ level: 'silent' });
const LATTICE = 'default';
const NAME = 'hello-world';
const DEPLOYED: LatticeStatus = { status: { type: 'deployed' } };
const RECONCILING: LatticeStatus = { status: { type: 'reconciling', message: 'Scaling component on 1 host(s)' } };

describe('awaitingReport, the rule', () => {
  const at = (ms: number) => new Date(TEST_EPOCH + ms).toISOString();
  const call = (previousStatus: unknown, nowMs: number) => ({ previousStatus, now: TEST_EPOCH + nowMs }) as Call;
  const read: StatusFacts = { status: DEPLOYED, predatesDeploy: false };
  const awaiting = { deployedVersion: 'v2', deployedAt: at(0) };

  it('awaits wadm after a deploy nobody has heard wadm report on, from the anchor in the status', () => {
    assert.equal(awaitingReport(call(awaiting, 3_000), 'v2', read), TEST_EPOCH);
  });
  it('awaits from now when the status does not know of the deploy (its answer never reached the resource)', () => {
    assert.equal(awaitingReport(call({ deployedVersion: 'v1' }, 3_000), 'v2', read), TEST_EPOCH + 3_000);
    assert.equal(awaitingReport(call(undefined, 0), 'v2', read), TEST_EPOCH);
  });
  it('takes a status heard later than the anchor, past the clocks margin, as evidence', () => {
    const heard = (ms: number): StatusFacts => ({ ...read, heardAt: TEST_EPOCH + ms });
    assert.equal(awaitingReport(call(awaiting, 3_000), 'v2', heard(CLOCK_MARGIN_MS + 1)), undefined);
    assert.equal(awaitingReport(call(awaiting, 3_000), 'v2', heard(CLOCK_MARGIN_MS)), TEST_EPOCH);
    assert.equal(awaitingReport(call(awaiting, 3_000), 'v2', heard(-5_000)), TEST_EPOCH);
  });
  it("trusts this replica's own exact knowledge either way", () => {
    assert.equal(awaitingReport(call(awaiting, 3_000), 'v2', { ...read, followsOwnDeploy: true }), undefined);
    assert.equal(awaitingReport(call(awaiting, 3_000), 'v2', { ...read, followsDeployOf: 'v2' }), undefined);
    assert.equal(
      awaitingReport(call(awaiting, 3_000), 'v2', { ...read, followsDeployOf: 'v1' }),
      TEST_EPOCH,
      'heard after a deploy of another version',
    );
    assert.equal(awaitingReport(call({ deployedVersion: 'v2' }, 3_000), 'v2', { ...read, predatesDeploy: true }), TEST_EPOCH + 3_000);
  });
  it('takes the status as it is once the deploy grace has passed, and when an earlier answer already did', () => {
    assert.equal(awaitingReport(call(awaiting, DEPLOY_GRACE_MS - 1), 'v2', read), TEST_EPOCH);
    assert.equal(awaitingReport(call(awaiting, DEPLOY_GRACE_MS), 'v2', read), undefined);
    assert.equal(awaitingReport({ ...call(awaiting, 2_000), deployGraceMs: 2_000 }, 'v2', read), undefined);
    assert.equal(awaitingReport(call({ deployedVersion: 'v2' }, 0), 'v2', read), undefined);
  });
  it('awaits past the grace, up to the report wait, a status known to predate the deploy of this version', () => {
    const known: StatusFacts = { ...read, precedesDeployOf: 'v2' };
    assert.equal(awaitingReport(call(awaiting, DEPLOY_GRACE_MS), 'v2', known), TEST_EPOCH);
    assert.equal(awaitingReport(call(awaiting, REPORT_WAIT_MS - 1), 'v2', known), TEST_EPOCH);
    assert.equal(awaitingReport(call(awaiting, REPORT_WAIT_MS), 'v2', known), undefined, 'wadm stayed silent: it has nothing to report');
    assert.equal(
      awaitingReport(call(awaiting, 3_000), 'v2', { ...known, heardAt: TEST_EPOCH + 5_000 }),
      TEST_EPOCH,
      'no clock outweighs the order this replica saw',
    );
    assert.equal(awaitingReport(call(awaiting, DEPLOY_GRACE_MS), 'v2', { ...read, precedesDeployOf: 'v1' }), undefined, 'another deploy');
    assert.equal(awaitingReport(call({ deployedVersion: 'v2' }, 0), 'v2', known), undefined, "an earlier answer took wadm's word");
  });
  it('reads an anchor that is not a time as none', () => {
    assert.equal(awaitingReport(call({ deployedVersion: 'v2', deployedAt: 'soon' }, 0), 'v2', read), TEST_EPOCH);
  });
});

/** wadm in memory, publishing statuses only when told to; the replicas that watch it. */
function lattice(clock: TestClock) {
  const memory = new MemoryLattice();
  let published: LatticeStatus = { status: { type: 'undeployed' } };
  const replicas: Knowledge[] = [];

  function replica() {
    const knowledge = new Knowledge({ capacity: 8, modelTtlMs: 60_000, deployGraceMs: DEPLOY_GRACE_MS, livenessMs: 5_000, now: clock.now });
    replicas.push(knowledge);
    // As lattice/gateway.ts uses Knowledge for statuses and deploys; models are always read.
    const perform = async (lattice: string, name: string, action: Action): Promise<ActionResult> => {
      if (action.kind === 'read-model') knowledge.manage(lattice, name);
      if (action.kind === 'read-status') {
        return { kind: 'status', status: knowledge.status(lattice, name) ?? knowledge.rememberStatus(lattice, name, published, false) };
      }
      const result = await memory.perform(lattice, name, action);
      knowledge.answered(lattice);
      if (action.kind === 'deploy' && result.kind === 'done')
        return { kind: 'done', at: knowledge.deployed(lattice, name, action.version) };
      return result;
    };
    const policy = fromPolicy(parsePolicy('rules: [{namespaces: ["*"], lattices: ["*"]}]'), LATTICE);
    return createHooks({
      lattice: { perform },
      tenancy: { defaultLattice: LATTICE, rule: 'policy', allows: (n, l) => policy.allows(n, l) },
      budgetMs: 5_000,
      now: clock.now,
      cacheEntries: 8,
    });
  }

  return {
    replica,
    /** wadm announces a deploy of `version` on its event stream: every replica watching hears it now. */
    announce(version: string) {
      for (const knowledge of replicas) knowledge.forgetModel(LATTICE, NAME, version);
    },
    /** wadm publishes on its status stream: every replica watching hears it now. */
    publish(status: LatticeStatus) {
      published = status;
      for (const knowledge of replicas) knowledge.rememberStatus(LATTICE, NAME, status, true);
    },
  };
}

describe('replicas after an edit', () => {
  type Hooks = ReturnType<ReturnType<typeof lattice>['replica']>;
  const sync = async (hooks: Hooks, description: string, status: ApplicationStatus | undefined) => {
    const request = hookRequest(wasmApp().described(description).build());
    if (status) request.parent.status = status;
    return (await hooks.run('sync', request, SILENT)).response.status;
  };
  const ready = (status: ApplicationStatus) => status.conditions!.find((c) => c.type === 'Ready')!.status;
  /** Version one settled on replica A, then the edit to version two answered by A; wadm has not reported on it. */
  const settledThenEdited = async () => {
    const clock = testClock();
    const wadm = lattice(clock);
    const a = wadm.replica();
    const first = await sync(a, 'one', undefined);
    wadm.publish(DEPLOYED);
    const settled = await sync(a, 'one', first);
    assert.equal(ready(settled), 'True');
    return { clock, wadm, settled, edited: await sync(a, 'two', settled) };
  };

  it('say Progressing, the same status byte for byte, until wadm reports on the new version, then agree', async () => {
    // The edit, answered by A; wadm's report on it is held back: its latest status is v1's "deployed".
    const { clock, wadm, settled, edited } = await settledThenEdited();
    let status = edited;
    assert.notEqual(status.version, settled.version);
    assert.equal(status.deployedAt, new Date(clock.now()).toISOString());
    const awaiting = JSON.stringify(status);
    // The next syncs alternate between B and a replica started afresh each time, never A.
    const b = wadm.replica();
    for (let i = 0; i < 8; i++) {
      clock.advance(1_000);
      const replica = i % 2 === 0 ? b : wadm.replica();
      status = await sync(replica, 'two', status);
      assert.equal(JSON.stringify(status), awaiting, `sync ${i + 1}, ${(i + 1) * 1_000} ms after the deploy`);
    }

    // wadm reports on the new version: whoever heard it says so, and the others follow the status.
    clock.advance(500);
    wadm.publish(RECONCILING);
    status = await sync(b, 'two', status);
    assert.equal(status.phase, 'Reconciling');
    assert.equal(status.deployedAt, undefined);
    const fresh = wadm.replica();
    assert.equal(JSON.stringify(await sync(fresh, 'two', status)), JSON.stringify(status), 'a fresh replica gives the same answer');
    wadm.publish(DEPLOYED);
    status = await sync(fresh, 'two', status);
    assert.equal(ready(status), 'True');
    assert.equal(JSON.stringify(await sync(wadm.replica(), 'two', status)), JSON.stringify(status));
  });

  it('take the latest status as it is once the deploy grace has passed: wadm publishes nothing for a change it does not report', async () => {
    const { clock, wadm, edited } = await settledThenEdited();
    let status = edited;
    assert.equal(ready(status), 'False');
    clock.advance(DEPLOY_GRACE_MS - 1);
    assert.equal(ready(await sync(wadm.replica(), 'two', status)), 'False');
    clock.advance(1);
    assert.equal(ready(await sync(wadm.replica(), 'two', status)), 'True');
  });

  it('never take a status they know predates the deploy for Ready past the grace: a slow wadm reports later, without a flap', async () => {
    const clock = testClock();
    const wadm = lattice(clock);
    const [a, b] = [wadm.replica(), wadm.replica()];
    let status = await sync(a, 'one', undefined);
    wadm.publish(DEPLOYED);
    status = await sync(a, 'one', status);
    assert.equal(await sync(b, 'one', status).then(ready), 'True', 'B knows the application and its status');
    // A deploys version two; wadm announces it, and says nothing about it for 25 s.
    const edited = await sync(a, 'two', status);
    wadm.announce(edited.version!);
    status = edited;
    const seen: string[] = [];
    for (let second = 1; second <= 25; second++) {
      clock.advance(1_000);
      for (const replica of [a, b]) {
        status = await sync(replica, 'two', status);
        seen.push(`${ready(status)}/${status.conditions![0]!.reason}`);
      }
    }
    assert.deepEqual([...new Set(seen)], ['False/Progressing'], 'neither the deploying replica nor the watching one took the old status');
    wadm.publish(RECONCILING);
    assert.equal((await sync(b, 'two', status)).phase, 'Reconciling');
    wadm.publish(DEPLOYED);
    status = await sync(a, 'two', status);
    assert.equal(ready(status), 'True');
    assert.equal(JSON.stringify(await sync(b, 'two', status)), JSON.stringify(status), 'both agree');
  });

  it('take a status known to predate the deploy once wadm stayed silent for the report wait: the change was one it does not report', async () => {
    const clock = testClock();
    const wadm = lattice(clock);
    const a = wadm.replica();
    let status = await sync(a, 'one', undefined);
    wadm.publish(DEPLOYED);
    status = await sync(a, 'one', status);
    status = await sync(a, 'two', status);
    wadm.announce(status.version!);
    clock.advance(REPORT_WAIT_MS - 1);
    assert.equal(ready(await sync(a, 'two', status)), 'False');
    clock.advance(1);
    assert.equal(ready(await sync(a, 'two', status)), 'True');
  });

  it('keep the anchor through an outage: the answer after it is not taken as evidence', async () => {
    const { clock, wadm, edited } = await settledThenEdited();
    let status = edited;
    const anchor = status.deployedAt;
    const down = createHooks({
      lattice: { perform: () => Promise.resolve({ kind: 'unavailable', reason: 'NoResponders', message: 'no responders' }) },
      tenancy: { defaultLattice: LATTICE, rule: 'policy', allows: () => true },
      budgetMs: 5_000,
      now: clock.now,
      cacheEntries: 8,
    });
    clock.advance(1_000);
    status = await sync(down, 'two', status);
    assert.equal(status.conditions![0]!.reason, 'LatticeUnavailable');
    assert.equal(status.deployedAt, anchor);
    clock.advance(1_000);
    assert.equal(ready(await sync(wadm.replica(), 'two', status)), 'False');
  });
});
