// Lattices as platform teams run them, against the real wadm 0.21.1 and nats-server, the service
// as its own process driven like Metacontroller: resources that move between lattices (the old
// one is cleaned once wadm reports the new one runs the application, never before), a
// DEFAULT_LATTICE change rolling out over two replicas (nothing moves), and long histories of
// large manifests (wadm keeps every version in one NATS message; the service makes room first).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NatsConnection } from 'nats';
import { startLattice, type SimulatedLattice } from '../support/host-sim.js';
import { condition, metacontrollerFor, type FakeMetacontroller, type K8sObject } from '../support/metacontroller.js';
import { startLatticeStage, type LatticeStage } from '../support/lattice-stage.js';
import { wasmApp, type Resource } from '../support/resources.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { startServiceStandIn } from '../support/service-stand-in.js';

let stage: LatticeStage;
let service: ServiceProcess;
let nc: NatsConnection;
let mc: FakeMetacontroller;

before(async () => {
  stage = await startLatticeStage({ hosted: ['north', 'south', 'big'] });
  ({ service, nc, mc } = stage);
});
after(() => stage?.stop());

interface Versions {
  result: string;
  versions?: { version: string; deployed: boolean }[];
}

async function versions(lattice: string, name: string): Promise<Versions> {
  const reply = await nc.request(`wadm.api.${lattice}.model.versions.${name}`, '', { timeout: 5000 });
  return reply.json<Versions>();
}

const deployedIn = async (lattice: string, name: string) =>
  (await versions(lattice, name)).versions?.find((v) => v.deployed)?.version ?? null;
const ready = (obj: K8sObject | undefined) => condition(obj, 'Ready');
const statusOf = (obj: K8sObject | undefined) =>
  (obj?.status ?? {}) as { version?: string; deployedVersion?: string; lattice?: string; formerLattices?: string[]; message?: string };

function named(name: string, spec: Record<string, unknown>): Resource {
  return wasmApp().with(spec).named(name).inNamespace('movers').unannotated().build();
}

async function readyIn(name: string, spec: Record<string, unknown>): Promise<K8sObject> {
  mc.apply(named(name, spec) as never);
  const { object } = await mc.waitFor(
    'movers',
    name,
    (obj) => ready(obj)?.status === 'True' && statusOf(obj).formerLattices === undefined,
    { timeoutMs: 90_000, intervalMs: 200 },
  );
  return object!;
}

describe('a resource that moves to another lattice', () => {
  for (const deletionPolicy of ['Delete', 'Orphan'] as const) {
    it(`is deployed in the new lattice, then ${deletionPolicy === 'Delete' ? 'deleted from' : 'undeployed in'} the old one; deleting it then leaves ${deletionPolicy === 'Delete' ? 'nothing in either' : 'it running in the new lattice only'}`, async () => {
      const name = `mover-${deletionPolicy.toLowerCase()}`;
      const inNorth = await readyIn(name, { lattice: 'north', deletionPolicy });
      const version = statusOf(inNorth).version!;
      assert.equal(await deployedIn('north', name), version);

      const inSouth = await readyIn(name, { lattice: 'south', deletionPolicy });
      assert.equal(statusOf(inSouth).lattice, 'south');
      assert.equal(await deployedIn('south', name), version, 'the same version, put in the new lattice');
      if (deletionPolicy === 'Delete') assert.equal((await versions('north', name)).result, 'notfound', 'gone from the old lattice');
      else
        assert.deepEqual((await versions('north', name)).versions, [{ version, deployed: false }], 'kept, undeployed, in the old lattice');

      assert.equal((await mc.deleteAndFinalize('movers', name)).removed, true);
      assert.equal(await deployedIn('south', name), deletionPolicy === 'Orphan' ? version : null);
      assert.equal(await deployedIn('north', name), null, 'nothing left deployed in the old lattice');
      if (deletionPolicy === 'Delete') assert.equal((await versions('south', name)).result, 'notfound');
    });
  }

  it('keeps running in the old lattice while the new one cannot have it (an invalid spec), and finalize cleans both', async () => {
    const name = 'stays';
    const inNorth = await readyIn(name, { lattice: 'north' });
    mc.apply(named(name, { lattice: 'south', version: 'latest' }) as never);
    const { object } = await mc.waitFor('movers', name, (obj) => ready(obj)?.reason === 'InvalidSpec', {
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    assert.deepEqual(statusOf(object).formerLattices, ['north']);
    assert.equal(await deployedIn('north', name), statusOf(inNorth).version);
    assert.equal((await mc.deleteAndFinalize('movers', name)).removed, true);
    assert.equal((await versions('north', name)).result, 'notfound', 'finalize cleaned the former lattice too');
  });
});

describe('a move to a lattice where no host runs', () => {
  let east: SimulatedLattice | undefined;
  after(() => east?.stop());

  it('leaves the application running in the old lattice and says why, then finishes once a host runs it in the new one', async () => {
    const name = 'to-east';
    const moves = {
      deployed: await service.metric('moves_total{stage="deployed"}'),
      retired: await service.metric('moves_total{stage="retired"}'),
    };
    const drifts = await service.metric('drift_corrections_total{kind="undeployed"}');
    const inNorth = await readyIn(name, { lattice: 'north' });
    const version = statusOf(inNorth).version!;
    mc.apply(named(name, { lattice: 'east' }) as never);
    const kept = `the application is left as it is in former lattice "north" until wadm reports it deployed in lattice "east"`;
    await mc.waitFor('movers', name, (obj) => statusOf(obj).lattice === 'east' && statusOf(obj).message?.endsWith(kept) === true, {
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    // Resyncs as Metacontroller would make them: wadm in east acknowledged the deploy, runs nothing.
    for (let pass = 0; pass < 10; pass++) {
      await mc.reconcile('movers', name);
      const status = statusOf(mc.get('movers', name));
      assert.deepEqual(status.formerLattices, ['north'], `pass ${pass}: north kept`);
      assert.notEqual(ready(mc.get('movers', name))?.status, 'True');
      assert.ok(status.message?.endsWith(kept), `pass ${pass}: says why: ${status.message}`);
    }
    assert.equal(await deployedIn('north', name), version, 'still running in the old lattice');
    assert.equal(await deployedIn('east', name), version, 'deployed in the new one, where wadm waits for a host');

    east = await startLattice({ servers: stage.nats.url, lattice: 'east', hosts: [{}], heartbeatMs: 500, waitForWadm: true });
    await readyIn(name, { lattice: 'east' });
    assert.equal((await versions('north', name)).result, 'notfound', 'retired once east runs it');
    assert.equal(await service.metric('moves_total{stage="deployed"}'), moves.deployed + 1);
    assert.equal(await service.metric('moves_total{stage="retired"}'), moves.retired + 1);
    assert.equal(await service.metric('drift_corrections_total{kind="undeployed"}'), drifts, 'a move is not drift');
    assert.equal((await mc.deleteAndFinalize('movers', name)).removed, true);
  });
});

describe('a DEFAULT_LATTICE change rolling out', () => {
  it('moves, undeploys and deletes nothing while old and new replicas answer in turn; new applications go to the new default', async () => {
    const replicas = await Promise.all(
      ['north', 'south'].map((lattice) => startServiceProcess({ NATS_URL: stage.nats.url, DEFAULT_LATTICE: lattice })),
    );
    const standIn = await startServiceStandIn(replicas.map((r) => r.url));
    try {
      const rollout = metacontrollerFor(standIn.url);
      const resource = () => wasmApp().named('defaulted').inNamespace('rollout').unannotated().build();
      rollout.apply(resource() as never);
      const { object } = await rollout.waitFor('rollout', 'defaulted', (obj) => ready(obj)?.status === 'True', {
        timeoutMs: 90_000,
        intervalMs: 200,
      });
      const home = statusOf(object).lattice!;
      const version = statusOf(object).version!;
      const sent = [...standIn.sent];
      for (let pass = 0; pass < 8; pass++) {
        await rollout.reconcile('rollout', 'defaulted');
        assert.equal(statusOf(rollout.get('rollout', 'defaulted')).lattice, home, `pass ${pass}: still in ${home}`);
        assert.equal(ready(rollout.get('rollout', 'defaulted'))?.status, 'True');
      }
      assert.ok(
        standIn.sent.every((n, i) => n > sent[i]!),
        'both replicas answered',
      );
      assert.equal(await deployedIn(home, 'defaulted'), version);
      const other = home === 'north' ? 'south' : 'north';
      assert.equal((await versions(other, 'defaulted')).result, 'notfound', `nothing put in ${other}`);
      for (const replica of replicas) {
        for (const operation of ['delete', 'undeploy', 'prune'])
          assert.equal(await replica.metric(`wadm_writes_total{operation="${operation}"}`), 0, `no ${operation}`);
      }
      assert.equal(rollout.get('rollout', 'defaulted')!.status!['formerLattices'], undefined);

      // A resource created now, first answered by a new replica, goes to the new default.
      const fresh = metacontrollerFor(replicas[1]!.url);
      fresh.apply(wasmApp().named('newcomer').inNamespace('rollout').unannotated().build() as never);
      const { object: newcomer } = await fresh.waitFor('rollout', 'newcomer', (obj) => ready(obj)?.status === 'True', {
        timeoutMs: 90_000,
        intervalMs: 200,
      });
      assert.equal(statusOf(newcomer).lattice, 'south');
      assert.equal(await deployedIn('south', 'newcomer'), statusOf(newcomer).version);
      assert.equal((await fresh.deleteAndFinalize('rollout', 'newcomer')).removed, true);
      assert.equal((await rollout.deleteAndFinalize('rollout', 'defaulted')).removed, true);
    } finally {
      await standIn.close();
      await Promise.all(replicas.map((r) => r.stop()));
    }
  });
});

describe('twelve edits of a ~110 KB manifest', () => {
  it('deploys each new version, never says LatticeUnavailable, and wadm keeps only what fits in one NATS message', async () => {
    const name = 'hefty';
    const seen: string[] = [];
    let kept = 0;
    for (let edit = 0; edit < 12; edit++) {
      const resource = wasmApp().withLargeConfig(edit).build();
      mc.apply({ ...resource, metadata: { name, namespace: 'movers' }, spec: { ...resource.spec, lattice: 'big' } } as never);
      const { object } = await mc.waitFor(
        'movers',
        name,
        (obj) => {
          seen.push(String(ready(obj)?.reason));
          return (
            statusOf(obj).deployedVersion !== undefined &&
            statusOf(obj).deployedVersion === statusOf(obj).version &&
            statusOf(obj).version !== undefined
          );
        },
        { timeoutMs: 60_000, intervalMs: 100 },
      );
      const version = statusOf(object).version!;
      assert.equal(await deployedIn('big', name), version, `edit ${edit}: deployed in wadm`);
      kept = (await versions('big', name)).versions!.length;
      assert.ok(kept <= 9, `edit ${edit}: wadm keeps ${kept} versions`);
    }
    assert.ok(!seen.includes('LatticeUnavailable'), `reasons seen: ${[...new Set(seen)].join(', ')}`);
    assert.equal(kept, 9, 'as many as fit: nine of ~110 KB in 1 MiB');
    const pruned = await service.metric('wadm_writes_total{operation="prune"}');
    assert.ok(pruned >= 3, `${pruned} older versions deleted to make room`);
    assert.equal((await mc.deleteAndFinalize('movers', name)).removed, true);
  });
});
