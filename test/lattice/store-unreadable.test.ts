// wadm's store unreadable for a while, against the real wadm: JetStream's direct get of wadm's KV
// bucket turned off (wadm-relay.ts storeReadable), so that every model read fails and wadm answers
// `Internal storage error`, as during a JetStream leader election or a NATS failover, while
// `model.status` and `model.history` still answer and another lattice answers normally. What a user
// saw before: a delete finalized at once and left the running application owned by nothing; a new
// application was told to rename itself (NameCollision); a move forgot its former lattice. Each now
// waits (LatticeUnavailable, retried) and finishes once the store is readable again.
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { condition, type FakeMetacontroller, type K8sObject } from '../support/metacontroller.js';
import { wasmApp } from '../support/resources.js';
import { startScenario, WADM_WAIT, type Scenario } from '../support/scenario.js';
import { startLattice, type SimulatedLattice } from '../support/host-sim.js';
import { until } from '../support/wait.js';
import type { WadmRelay } from '../support/wadm-relay.js';

let scenario: Scenario;
let wadm: WadmRelay;
let mc: FakeMetacontroller;

before(async () => {
  scenario = await startScenario({ WADM_TIMEOUT_MS: '1500' });
  ({ wadm } = scenario);
});
after(() => scenario.stop());
beforeEach(async () => {
  await scenario.reset();
  mc = scenario.metacontroller();
});
afterEach(async () => {
  await wadm.storeReadable(true);
  for (const lattice of ['other', 'moved']) await wadm.clear(lattice);
});

const ready = (obj: K8sObject | undefined) => condition(obj, 'Ready');
const isReady = (obj: K8sObject | undefined) => ready(obj)?.status === 'True';

async function deployed(name: string): Promise<void> {
  mc.apply(wasmApp().named(name).build() as never);
  await mc.waitFor('default', name, isReady, WADM_WAIT);
}

/** A resource in lattice `other` synced just now: wadm answers that lattice normally. */
async function anotherLatticeAnswers(): Promise<void> {
  mc.apply(wasmApp().named('busy').inLattice('other').build() as never);
  const pass = await mc.reconcile('default', 'busy');
  assert.equal(pass.httpStatus, 200);
  assert.equal(mc.get('default', 'busy')?.status?.['deployedVersion'], mc.get('default', 'busy')?.status?.['version']);
}

describe("a delete while wadm's store is unreadable", () => {
  it('keeps the finalizer and the running application, and finalizes once the store is readable', async () => {
    await deployed('shop');
    await anotherLatticeAnswers();
    const deletesBefore = wadm.count('del');
    await wadm.storeReadable(false);
    const waiting = await mc.deleteAndFinalize('default', 'shop', { maxPasses: 2 });
    assert.equal(waiting.removed, false);
    assert.deepEqual(
      waiting.results.map((r) => [r.hook, r.finalized ?? false, r.resyncAfterSeconds !== undefined]),
      [
        ['finalize', false, true],
        ['finalize', false, true],
      ],
    );
    assert.equal(ready(waiting.object)?.reason, 'LatticeUnavailable');
    assert.equal(ready(waiting.object)?.status, 'Unknown');
    assert.match(
      ready(waiting.object)?.message ?? '',
      /\(StorageError\): wadm answered "Internal storage error" reading the key "default-shop"/,
    );
    assert.doesNotMatch(ready(waiting.object)?.message ?? '', /Nothing to delete/);
    assert.equal(wadm.count('del'), deletesBefore, 'no delete sent: the model could not be read');

    await wadm.storeReadable(true);
    assert.ok((await wadm.model('default', 'shop'))?.deployed, 'still deployed in wadm, still this resource');
    const gone = await mc.deleteAndFinalize('default', 'shop');
    assert.equal(gone.removed, true);
    assert.equal(await wadm.model('default', 'shop'), undefined);
  });
});

describe("a sync while wadm's store is unreadable", () => {
  it('is LatticeUnavailable for a new application, never NameCollision, writes nothing, and deploys once readable', async () => {
    await anotherLatticeAnswers();
    const putsBefore = wadm.count('put');
    await wadm.storeReadable(false);
    mc.apply(wasmApp().named('cart').build() as never);
    await mc.reconcile('default', 'cart');
    const obj = mc.get('default', 'cart');
    assert.equal(ready(obj)?.reason, 'LatticeUnavailable');
    assert.equal(ready(obj)?.status, 'Unknown');
    assert.equal(condition(obj, 'Stalled'), undefined, 'nothing for the user to fix');
    assert.match(
      ready(obj)?.message ?? '',
      /whether the key is lattice "default-cart"'s list of applications could not be checked \(StorageError/,
    );
    assert.equal(wadm.count('put'), putsBefore, 'nothing put');

    await wadm.storeReadable(true);
    await mc.waitFor('default', 'cart', isReady, WADM_WAIT);
  });
});

describe("a move while wadm's store is unreadable", () => {
  // The former lattice is retired only once wadm reports the application deployed in the new one,
  // so the new one has a host.
  let moved: SimulatedLattice | undefined;
  before(async () => {
    moved = await startLattice({ servers: scenario.nats.url, lattice: 'moved', heartbeatMs: 500, waitForWadm: true });
  });
  after(() => moved?.stop());

  it('keeps the former lattice in status.formerLattices, the application running there, and cleans it up once readable', async () => {
    await deployed('mover');
    // The store goes when the move reaches the former lattice: the new one runs the application.
    const former = wadm.hold('versions', { lattice: 'default' });
    mc.apply(wasmApp().named('mover').inLattice('moved').build() as never);
    // Passes as Metacontroller makes them, until one retires the former lattice (held at the relay).
    const pass = await until(
      async () => {
        const next = mc.reconcile('default', 'mover');
        const retiring = await Promise.race([former.arrived.then(() => true), next.then(() => false)]);
        return retiring && { next };
      },
      { what: 'a pass that retires the former lattice', ...WADM_WAIT },
    );
    await wadm.storeReadable(false);
    former.release();
    assert.equal((await pass.next).httpStatus, 200);
    const status = mc.get('default', 'mover')!.status as { lattice: string; formerLattices?: string[]; message: string };
    assert.equal(status.lattice, 'moved');
    assert.deepEqual(status.formerLattices, ['default']);
    assert.match(status.message, /not yet cleaned up in former lattice "default" \(StorageError\)/);

    await wadm.storeReadable(true);
    assert.ok((await wadm.model('default', 'mover'))?.deployed, 'still running in the former lattice');
    assert.ok((await wadm.model('moved', 'mover'))?.deployed, 'deployed in the new lattice');
    const { object } = await mc.waitFor('default', 'mover', (obj) => obj?.status?.['formerLattices'] === undefined, WADM_WAIT);
    assert.match(String(object?.status?.['message']), /deleted the application in former lattice "default"/);
    assert.equal(await wadm.model('default', 'mover'), undefined);
  });
});
