// Lattices as platform teams run them, against the real wadm 0.21.1 and nats-server, the service
// as its own process driven like Metacontroller: resources that move between lattices (the old
// one is cleaned once the new one has the application), and long histories of large manifests
// (wadm keeps every version in one NATS message; the service makes room before each put).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NatsConnection } from 'nats';
import { condition, type FakeMetacontroller, type K8sObject } from '../support/metacontroller.js';
import { startLatticeStage, type LatticeStage } from '../support/lattice-stage.js';
import { wasmApp, type Resource } from '../support/resources.js';
import type { ServiceProcess } from '../support/service-process.js';

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
