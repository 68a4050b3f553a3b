// What a WasmCloudLattice costs wadm, counted on an injected clock, never timed: its hosts come from
// their heartbeats (no request), its applications from the census's list of the lattice, read once
// per check period and shared with the applications' own checks, and each owner once per version.
// A settled resync within the period sends nothing at all.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHECK_PERIOD_MS, HOST_HEARTBEAT_MS } from '../../src/wiring/lattice.js';
import type { WasmCloudLatticeStatus } from '../../src/schema/lattice.js';
import { testClock } from '../support/clock.js';
import { WADM_STALL_TOLERANT_MS } from '../support/host-sim.js';
import { startLatticeResourceStage, type LatticeResourceStage } from '../support/lattice-resources.js';
import { condition, type FakeMetacontroller, type K8sObject } from '../support/metacontroller.js';
import { wasmApp } from '../support/resources.js';
import type { WadmRelay } from '../support/wadm-relay.js';

const LATTICE = 'quiet';
const WAIT = { timeoutMs: WADM_STALL_TOLERANT_MS, intervalMs: 50 };
/** The service's clock: it moves only when a test moves it (the hosts heartbeat in real time meanwhile). */
const clock = testClock();

let stage: LatticeResourceStage;
let wadm: WadmRelay;
let apps: FakeMetacontroller;
let lattices: FakeMetacontroller;

before(async () => {
  stage = await startLatticeResourceStage({
    lattice: LATTICE,
    hosts: [{ labels: { zone: 'eu' } }, {}],
    env: { MODEL_CACHE_TTL_SECONDS: '600' },
    service: { now: clock.now },
  });
  ({ wadm, apps, lattices } = stage);
});
after(() => stage?.stop());

const status = (obj: K8sObject | undefined) => obj?.status as WasmCloudLatticeStatus | undefined;
const settledLattice = (obj: K8sObject | undefined) =>
  condition(obj, 'Ready')?.status === 'True' &&
  status(obj)?.hostCount === 2 &&
  status(obj)?.applicationCount === 2 &&
  (status(obj)?.applications ?? []).every((a) => a.owner !== undefined || a.unowned === true);
/** The requests wadm received since `from`, as `op` or `op.name`. */
const sentSince = (from: number) => wadm.requests.slice(from).map((r) => (r.name === undefined ? r.op : `${r.op}.${r.name}`));

describe("a WasmCloudLattice's cost", () => {
  it('is no wadm request for a settled resync, one list per check period (shared with the applications), one owner read per version', async () => {
    // An application of a resource, and one put with wadm's API, both deployed in the lattice.
    apps.apply(wasmApp().inLattice(LATTICE).build() as never);
    await apps.waitFor('default', 'hello-world', (obj) => condition(obj, 'Ready')?.status === 'True', WAIT);
    await stage.putUnowned('washed');

    const first = wadm.requests.length;
    lattices.apply({ metadata: { name: LATTICE } });
    await lattices.reconcile('', LATTICE);
    assert.deepEqual(
      sentSince(first).sort(),
      ['get', 'get.hello-world', 'get.washed'],
      'the list, then the owner of each application shown',
    );
    // Past the listening (one default heartbeat period), the hosts heard again on the moved clock.
    clock.advance(HOST_HEARTBEAT_MS);
    await lattices.waitFor('', LATTICE, settledLattice, WAIT);

    const settled = wadm.requests.length;
    for (let i = 0; i < 20; i++) await lattices.reconcile('', LATTICE);
    assert.deepEqual(sentSince(settled), [], 'no request reached wadm');
    assert.ok(settledLattice(lattices.get('', LATTICE)));

    // A period later: one list, which also confirms what the application's resyncs answer from.
    clock.advance(CHECK_PERIOD_MS);
    const period = wadm.requests.length;
    await lattices.waitFor('', LATTICE, settledLattice, WAIT);
    for (let i = 0; i < 5; i++) await lattices.reconcile('', LATTICE);
    for (let i = 0; i < 5; i++) await apps.reconcile('default', 'hello-world');
    assert.deepEqual(sentSince(period), ['get'], "one list for the lattice and the application's check; the owners are remembered");
    assert.equal(condition(apps.get('default', 'hello-world'), 'Ready')?.status, 'True');
  });
});
