// wadm's store lost while the service runs, against the real wadm: wadm stopped, every JetStream
// stream and KV bucket of its NATS server deleted, wadm started again (wadm-relay.ts
// restartOnEmptyStore). wadm announces nothing and answers as if no application had ever been put.
// What a user saw before: every application kept answering Ready=True from memory for up to
// MODEL_CACHE_TTL_SECONDS (300 s) plus a resync while wadm ran none of them. Now the first resync
// past one check period (60 s, Metacontroller's resync period) lists each lattice once, finds the
// models gone, and puts and deploys each application again at the same version; Ready=True comes
// back only once wadm reports the redeploy. Periods are counted on the service's own clock
// (testClock), never timed. Also: a list that fails, and a lattice too crowded to list.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHECK_PERIOD_MS } from '../../src/wiring/lattice.js';
import { testClock } from '../support/clock.js';
import { condition, metacontrollerFor, type FakeMetacontroller, type K8sObject } from '../support/metacontroller.js';
import { wasmApp } from '../support/resources.js';
import { startScenario, WADM_WAIT, type Scenario } from '../support/scenario.js';
import { CleanupStack, startService, type RunningService } from '../support/service.js';
import type { WadmRelay } from '../support/wadm-relay.js';
import { until } from '../support/wait.js';

/** The service's clock: it moves only when a test moves it. */
const clock = testClock();
let scenario: Scenario;
let wadm: WadmRelay;
let running: RunningService;
let mc: FakeMetacontroller;

before(async () => {
  scenario = await startScenario({ WADM_TIMEOUT_MS: '1500' }, { now: clock.now });
  ({ wadm, running } = scenario);
});
after(() => scenario.stop());
beforeEach(async () => {
  await scenario.reset();
  mc = scenario.metacontroller();
});

const isReady = (obj: K8sObject | undefined) => condition(obj, 'Ready')?.status === 'True';
const versionOf = (obj: K8sObject | undefined) => obj?.status?.['version'] as string;

/** Applied and synced until Ready and settled, through every emulator given (all share one store of parents). */
async function settled(names: string[], via: FakeMetacontroller[] = [mc]): Promise<Record<string, string>> {
  for (const name of names) mc.apply(wasmApp().named(name).build() as never);
  await Promise.all(names.map((name) => mc.waitFor('default', name, isReady, WADM_WAIT)));
  for (const name of names) for (const each of via) await each.reconcileUntilStable('default', name, { maxPasses: 3 });
  return Object.fromEntries(names.map((name) => [name, versionOf(mc.get('default', name))]));
}

/** Lists of a lattice the relay saw (`model.get` without a name). */
const lists = (lattice: string) => wadm.requests.filter((r) => r.op === 'get' && r.name === undefined && r.lattice === lattice).length;

/**
 * One pass through `via`; whenever it answers Ready=True, wadm holds that version deployed (asked
 * past the relay). Resolves with whether it was Ready.
 */
async function honestPass(via: FakeMetacontroller, lattice: string, name: string): Promise<boolean> {
  await via.reconcile('default', name);
  const obj = via.get('default', name);
  if (!isReady(obj)) return false;
  const held = await wadm.model(lattice, name);
  assert.equal(held?.deployed, versionOf(obj), `${name} answered Ready=True for ${versionOf(obj)}; wadm holds ${JSON.stringify(held)}`);
  return true;
}

describe("wadm's store lost", () => {
  it('is noticed at the first resync past one period: every application put and deployed again at the same version, by either replica', async () => {
    const cleanups = new CleanupStack();
    try {
      const second = await startService(
        cleanups,
        { NATS_URL: scenario.nats.url, WADM_TIMEOUT_MS: '1500' },
        { now: clock.now, deployGraceMs: 300 },
      );
      await second.connected();
      const mcSecond = metacontrollerFor(second.url, { api: mc.api });
      const names = ['alpha', 'beta', 'gamma'];
      // Both replicas remember every application and answer it from memory.
      const versions = await settled(names, [mc, mcSecond]);
      wadm.reset();
      for (const name of names) for (const each of [mc, mcSecond]) await each.reconcile('default', name);
      assert.equal(wadm.count(), 0, 'answered from memory by both replicas');

      await wadm.restartOnEmptyStore();
      wadm.reset();
      for (const name of names) assert.equal(await wadm.model('default', name), undefined, 'wadm has nothing any more');

      clock.advance(CHECK_PERIOD_MS);
      // One resync pass of each application, spread over the two replicas as the Service spreads calls.
      const replicaOf = (i: number) => (i % 2 === 0 ? mc : mcSecond);
      for (const [i, name] of names.entries()) {
        await replicaOf(i).reconcile('default', name);
        assert.equal(isReady(mc.get('default', name)), false, `${name}: not Ready before wadm reports the redeploy`);
      }
      for (const name of names)
        assert.deepEqual(await wadm.model('default', name), { versions: [versions[name]], deployed: versions[name] }, name);
      assert.equal(wadm.count('put'), names.length, 'each application put once');
      assert.equal(wadm.count('deploy'), names.length, 'and deployed once');
      assert.equal(lists('default'), 2, 'one list of the lattice per replica');

      // Pass after pass through both replicas, Ready=True only for what wadm holds deployed.
      for (const name of names) {
        await until(async () => (await honestPass(mc, 'default', name)) && (await honestPass(mcSecond, 'default', name)), {
          what: `${name} Ready again through both replicas`,
          ...WADM_WAIT,
        });
        assert.equal(versionOf(mc.get('default', name)), versions[name], 'at the same version');
      }
      assert.equal(wadm.count('put'), names.length, 'nothing put twice');
      const checks = await running.service.metrics.latticeChecks.get();
      assert.ok((checks.values.find((v) => v.labels['outcome'] === 'contradicted')?.value ?? 0) >= 1);
    } finally {
      await cleanups.run();
    }
  });

  it('costs one list per lattice and period while nothing is lost, however many applications the lattice has', async () => {
    const names = Array.from({ length: 6 }, (_, i) => `app-${i}`);
    await settled(names);
    clock.advance(CHECK_PERIOD_MS);
    wadm.reset();
    for (const name of names) await mc.reconcile('default', name);
    assert.deepEqual(wadm.requests, [{ op: 'get', lattice: 'default' }], `one list for ${names.length} applications`);
    for (const name of names) await mc.reconcile('default', name);
    assert.equal(wadm.count(), 1, 'and memory again for the rest of the period');
    for (const name of names) assert.ok(isReady(mc.get('default', name)), name);
  });
});

describe("a list that fails while wadm's store is unreadable", () => {
  it('answers from wadm, never from memory, and is not sent again before the next period', async () => {
    const names = ['one', 'two'];
    await settled(names);
    await wadm.storeReadable(false);
    try {
      wadm.reset();
      clock.advance(CHECK_PERIOD_MS);
      for (const name of names) {
        await mc.reconcile('default', name);
        assert.equal(condition(mc.get('default', name), 'Ready')?.reason, 'LatticeUnavailable', name);
      }
      // wadm's storage errors are retried three times, as for every read (wadm-client.ts).
      assert.equal(lists('default'), 4, 'one list for the lattice, failed');
    } finally {
      await wadm.storeReadable(true);
    }
    for (const name of names) await mc.waitFor('default', name, isReady, WADM_WAIT);
    assert.equal(lists('default'), 4, 'not listed again within the period: each model was read instead');
    clock.advance(CHECK_PERIOD_MS);
    for (const name of names) await mc.reconcile('default', name);
    assert.equal(lists('default'), 5, 'listed again the next period');
    for (const name of names) assert.ok(isReady(mc.get('default', name)), name);
  });
});

const CROWDED = 'crowded';
/** Models of someone else whose descriptions make the lattice's list larger than NATS's max_payload (1 MiB). */
const CROWD = 12;
const DESCRIPTION_BYTES = 100_000;

/** Puts the crowd straight to the real wadm. */
async function crowd(): Promise<void> {
  for (let i = 0; i < CROWD; i++) {
    const manifest = {
      apiVersion: 'core.oam.dev/v1beta1',
      kind: 'Application',
      metadata: { name: `imported-${i}`, annotations: { version: 'v1', description: 'x'.repeat(DESCRIPTION_BYTES) } },
      spec: { components: [] },
    };
    const reply = await wadm.direct(CROWDED, 'put', JSON.stringify(manifest));
    assert.match(reply.result, /created|newversion/, JSON.stringify(reply));
  }
}

describe('in a lattice too crowded to list', () => {
  it("reads each application's own model once a period instead, and still puts and deploys what wadm lost", async () => {
    await crowd();
    const names = ['one', 'two'];
    const deployed = (obj: K8sObject | undefined) =>
      obj?.status?.['deployedVersion'] !== undefined && obj?.status?.['deployedVersion'] === versionOf(obj);
    for (const name of names) {
      mc.apply(wasmApp().named(name).inLattice(CROWDED).build() as never);
      await mc.waitFor('default', name, deployed, WADM_WAIT);
      await mc.reconcile('default', name); // its model read once more, and remembered
    }
    const versions = Object.fromEntries(names.map((name) => [name, versionOf(mc.get('default', name))]));

    await wadm.restartOnEmptyStore();
    await crowd();
    wadm.reset();
    clock.advance(CHECK_PERIOD_MS);
    for (const name of names) await mc.reconcile('default', name);
    assert.equal(lists(CROWDED), 1, 'the list was asked once, and timed out');
    for (const name of names)
      assert.deepEqual(await wadm.model(CROWDED, name), { versions: [versions[name]], deployed: versions[name] }, name);
    assert.equal(wadm.count('put'), names.length);
    assert.ok(
      running.logs.some((line) => String(line['msg']).startsWith(`could not list lattice "${CROWDED}" (Timeout;`)),
      'the fallback is said in the log',
    );

    // The next period: no list, each application's own model read instead.
    for (const name of names) await mc.reconcile('default', name);
    clock.advance(CHECK_PERIOD_MS);
    wadm.reset();
    for (const name of names) await mc.reconcile('default', name);
    assert.equal(lists(CROWDED), 0, 'not asked again so soon');
    assert.equal(wadm.count('versions'), names.length, "one read of each application's model");
  });
});
