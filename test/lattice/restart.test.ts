// The first sync of settled applications by a fresh replica (a rolling update, a crash), against
// the real wadm: no status change, and the wadm requests counted at the relay. A replica that
// remembers nothing used to read versions, get and status of every application (3 requests each,
// 4 with several versions); now the lattice's list, one request however many applications it has,
// answers each one whose own status attests its version deployed (core/summary.ts). Where the
// lattice cannot be listed, each application costs at most 2 (its versions and its status).
// Counted on the service's own clock (testClock): the liveness window never passes by itself.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { testClock } from '../support/clock.js';
import { condition, metacontrollerFor, type FakeMetacontroller, type K8sObject } from '../support/metacontroller.js';
import { wasmApp } from '../support/resources.js';
import { startScenario, WADM_WAIT, type Scenario } from '../support/scenario.js';
import { CleanupStack, startService } from '../support/service.js';
import type { WadmRelay } from '../support/wadm-relay.js';

const clock = testClock();
let scenario: Scenario;
let wadm: WadmRelay;
let mc: FakeMetacontroller;

before(async () => {
  scenario = await startScenario({}, { now: clock.now });
  ({ wadm } = scenario);
});
after(() => scenario.stop());
beforeEach(async () => {
  await scenario.reset();
  mc = scenario.metacontroller();
});

const isReady = (obj: K8sObject | undefined) => condition(obj, 'Ready')?.status === 'True';
const NAMES = Array.from({ length: 8 }, (_, i) => `app-${i}`);

/** Applied and synced until Ready and settled. */
async function settled(names: string[]): Promise<void> {
  for (const name of names) mc.apply(wasmApp().named(name).build() as never);
  await Promise.all(names.map((name) => mc.waitFor('default', name, isReady, WADM_WAIT)));
  for (const name of names) await mc.reconcileUntilStable('default', name, { maxPasses: 3 });
}

/** A fresh replica beside the first, sharing its store of parents: it remembers nothing. */
async function freshReplica(cleanups: CleanupStack): Promise<FakeMetacontroller> {
  const fresh = await startService(cleanups, { NATS_URL: scenario.nats.url }, { now: clock.now, deployGraceMs: 300 });
  await fresh.connected();
  return metacontrollerFor(fresh.url, { api: mc.api });
}

/**
 * One sync of each application through `via`; every status as it was (no write), and the requests
 * wadm saw since the relay was reset (`reset`: now, faults forgotten).
 */
async function onePass(via: FakeMetacontroller, names: string[], { reset = true } = {}): Promise<string[]> {
  const before = new Map(names.map((name) => [name, JSON.stringify(mc.get('default', name)?.status)]));
  if (reset) wadm.reset();
  for (const name of names) {
    await via.reconcile('default', name);
    assert.equal(JSON.stringify(mc.get('default', name)?.status), before.get(name), `${name}: status unchanged`);
  }
  return wadm.requests.map((r) => `${r.op}${r.name === undefined ? '' : ` ${r.name}`}`);
}

describe('a fresh replica', () => {
  it("answers settled applications from their lattice's list: one request for all of them, no status change", async () => {
    await settled(NAMES);
    const cleanups = new CleanupStack();
    try {
      const fresh = await freshReplica(cleanups);
      assert.deepEqual(await onePass(fresh, NAMES), ['get'], 'one list, no model or status read');
      // Its answers are kept: the next pass asks wadm nothing.
      assert.deepEqual(await onePass(fresh, NAMES), [], 'the next resyncs are answered from memory');
    } finally {
      await cleanups.run();
    }
  });

  it('reads each model where the list does not agree, and asks for no second list', async () => {
    await settled(NAMES.slice(0, 3));
    // Undeployed outside Kubernetes: the list says so, and that application's model is read (the drift is healed).
    await wadm.direct('default', `undeploy.${NAMES[0]}`, '{}');
    const cleanups = new CleanupStack();
    try {
      const fresh = await freshReplica(cleanups);
      wadm.reset();
      for (const name of NAMES.slice(0, 3)) await fresh.reconcile('default', name);
      const said = wadm.requests.map((r) => `${r.op}${r.name === undefined ? '' : ` ${r.name}`}`);
      assert.deepEqual(
        said.filter((r) => r === 'get'),
        ['get'],
        'one list',
      );
      assert.deepEqual(
        said.filter((r) => r.endsWith(NAMES[0]!)),
        [`versions ${NAMES[0]}`, `get ${NAMES[0]}`, `deploy ${NAMES[0]}`],
        'the application the list contradicts is read and deployed again',
      );
      assert.equal(said.filter((r) => r.endsWith(NAMES[1]!) || r.endsWith(NAMES[2]!)).length, 0, 'the others: nothing');
    } finally {
      await cleanups.run();
    }
  });

  it('where the lattice cannot be listed, costs each application at most two requests (versions, status)', async () => {
    await settled(NAMES);
    const cleanups = new CleanupStack();
    try {
      const fresh = await freshReplica(cleanups);
      wadm.reset();
      // The list fails at once (as one past max_payload fails after WADM_TIMEOUT_MS): not asked again this period.
      wadm.inject('get', { kind: 'error', message: 'the list failed' });
      const said = await onePass(fresh, NAMES, { reset: false });
      assert.deepEqual(
        said.filter((r) => r === 'get'),
        ['get'],
        'the list, once',
      );
      for (const name of NAMES)
        assert.deepEqual(
          said.filter((r) => r.endsWith(` ${name}`)),
          [`versions ${name}`, `status ${name}`],
          name,
        );
    } finally {
      await cleanups.run();
    }
  });
});
