// Tenants sharing one wadm 0.21.1, which keeps every lattice's models in one KV bucket under
// `<lattice>-<name>` and each lattice's index under `<lattice>`: the service as its own process,
// driven like Metacontroller, against real nats-server and wadm and simulated hosts. A name that
// would take another tenant's key is refused before any write, and says nothing of that tenant.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { headers, type NatsConnection } from 'nats';
import { condition, type FakeMetacontroller, type K8sObject } from '../support/metacontroller.js';
import { startLatticeStage, type LatticeStage } from '../support/lattice-stage.js';
import { wasmApp, type AppBuilder, type Resource } from '../support/resources.js';
import type { ServiceProcess } from '../support/service-process.js';

let stage: LatticeStage;
let service: ServiceProcess;
let nc: NatsConnection;
let mc: FakeMetacontroller;

before(async () => {
  stage = await startLatticeStage({ hosted: ['kx', 'kx-y', 'qx', 'qx-y', 'ks-web'] });
  ({ service, nc, mc } = stage);
});
after(() => stage?.stop());

const app = (namespace: string, name: string, lattice: string): AppBuilder =>
  wasmApp().inLattice(lattice).named(name).inNamespace(namespace);
const ready = (obj: K8sObject | undefined) => condition(obj, 'Ready');

async function deployed(namespace: string, name: string, lattice: string): Promise<K8sObject> {
  mc.apply(app(namespace, name, lattice).build() as never);
  const { object } = await mc.waitFor(namespace, name, (obj) => ready(obj)?.status === 'True', { timeoutMs: 90_000, intervalMs: 100 });
  return object!;
}

async function refused(namespace: string, name: string, lattice: string, reason: string): Promise<K8sObject> {
  mc.apply(app(namespace, name, lattice).build() as never);
  const { object } = await mc.waitFor(namespace, name, (obj) => ready(obj)?.reason === reason, { timeoutMs: 60_000, intervalMs: 100 });
  return object!;
}

async function wadmApi(
  lattice: string,
  op: string,
  body: unknown = '',
): Promise<{ result: string; message?: string; versions?: { version: string; deployed: boolean }[]; models?: { name: string }[] }> {
  const h = headers();
  h.set('Content-Type', 'application/json');
  const reply = await nc.request(`wadm.api.${lattice}.model.${op}`, typeof body === 'string' ? body : JSON.stringify(body), {
    timeout: 5000,
    headers: h,
  });
  return JSON.parse(reply.string()) as { result: string };
}

/** Everything of a resource a tenant can read: its status, and the service's logs about it. */
function seenBy(namespace: string, obj: K8sObject): string {
  const logs = service.logs.filter((l) => Number(l['level']) >= 30 && JSON.stringify(l).includes(`${namespace}/`));
  return JSON.stringify(obj.status) + logs.map((l) => JSON.stringify(l)).join('\n');
}

function assertNamesNoOtherTenant(text: string, other: { namespace: string; name: string; lattice: string }): void {
  assert.doesNotMatch(text, new RegExp(other.namespace), 'names the other namespace');
  assert.doesNotMatch(text, new RegExp(`"${other.name}"`), "names the other tenant's application");
  assert.doesNotMatch(text, new RegExp(`lattice \\\\?"${other.lattice}\\\\?"`), "names the other tenant's lattice");
}

describe('two tenants whose applications share a wadm key', () => {
  for (const [order, first, second] of [
    [
      'lattice kx app y-z, then lattice kx-y app z',
      { namespace: 'tenant-a', name: 'y-z', lattice: 'kx' },
      { namespace: 'tenant-b', name: 'z', lattice: 'kx-y' },
    ],
    [
      'lattice qx-y app z, then lattice qx app y-z',
      { namespace: 'tenant-d', name: 'z', lattice: 'qx-y' },
      { namespace: 'tenant-c', name: 'y-z', lattice: 'qx' },
    ],
  ] as const) {
    it(`${order}: the second is refused, the first untouched and deployed, and neither learns of the other`, async () => {
      await deployed(first.namespace, first.name, first.lattice);
      const before = await wadmApi(first.lattice, `versions.${first.name}`);
      const writesBefore = await service.metric('wadm_writes_total{operation="put"}');
      const obj = await refused(second.namespace, second.name, second.lattice, 'NameCollision');
      assert.equal(condition(obj, 'Stalled')?.status, 'True');
      assert.match(String((obj.status as { message: string }).message), new RegExp(`key "${first.lattice}-${first.name}"`));
      assertNamesNoOtherTenant(seenBy(second.namespace, obj), first);
      assert.equal(await service.metric('wadm_writes_total{operation="put"}'), writesBefore, 'nothing written for the refused one');
      assert.deepEqual(await wadmApi(first.lattice, `versions.${first.name}`), before);
      const again = await mc.reconcileUntilStable(first.namespace, first.name);
      assert.equal(ready(again.object)?.status, 'True');
      // The refused resource's deletion leaves the other tenant's model alone.
      assert.equal((await mc.deleteAndFinalize(second.namespace, second.name)).removed, true);
      assert.deepEqual(await wadmApi(first.lattice, `versions.${first.name}`), before);
    });
  }
});

describe("an application named like another lattice's index", () => {
  it('app web in lattice ks is refused before any write, as lattice ks-web lists applications, and ks-web keeps working', async () => {
    await deployed('ks-web', 'site', 'ks-web');
    const listsBefore = await service.metric('wadm_requests_total{operation="get",outcome="ok"}');
    const obj = await refused('tenant-a', 'web', 'ks', 'NameCollision');
    // wadm's storage error reading key ks-web shows nothing alone: the list of ks-web shows its index there.
    assert.ok((await service.metric('wadm_requests_total{operation="get",outcome="ok"}')) > listsBefore, 'lattice ks-web was listed');
    assert.match(String((obj.status as { message: string }).message), /list of applications of lattice "ks-web"/);
    const list = await wadmApi('ks-web', 'get');
    assert.equal(list.result, 'success');
    assert.deepEqual(
      list.models?.map((m) => m.name),
      ['site'],
    );
    assert.equal((await wadmApi('ks', 'versions.web')).result, 'error', 'the key still holds the index of ks-web, not a model');
    // A second application in ks-web: wadm must still be able to add it to the lattice's index.
    await deployed('ks-web', 'shop', 'ks-web');
    // Deleting the refused resource finalizes (nothing of it is in wadm) and touches nothing.
    const gone = await mc.deleteAndFinalize('tenant-a', 'web');
    assert.equal(gone.removed, true);
    assert.deepEqual((await wadmApi('ks-web', 'get')).models?.map((m) => m.name).sort(), ['shop', 'site']);
  });
});

describe('a key that holds an emptied index', () => {
  it('is LatticeUnavailable, not NameCollision: wadm answers it as a failing store; the message says what to rename if it lasts', async () => {
    // An emptied index of lattice se-x: what wadm leaves after its last application is deleted.
    // wadm cannot read it as a model (Internal storage error, as from a failing store), and lattice
    // se-x lists nothing, so nothing shows whose key it is: the service waits, writing nothing.
    const manifest = {
      apiVersion: 'core.oam.dev/v1beta1',
      kind: 'Application',
      metadata: { name: 'tmp', annotations: { version: 'v1' } },
      spec: { components: [] },
    };
    assert.equal((await wadmApi('se-x', 'put', manifest)).result, 'created');
    assert.equal((await wadmApi('se-x', 'del.tmp', {})).result, 'deleted');
    const writesBefore = await service.metric('wadm_writes_total{operation="put"}');
    const obj = await refused('tenant-e', 'x', 'se', 'LatticeUnavailable');
    assert.equal(ready(obj)?.status, 'Unknown');
    assert.equal(condition(obj, 'Stalled'), undefined);
    const message = String((obj.status as { message: string }).message);
    assert.match(message, /reading the key "se-x" of application "x"/);
    assert.match(message, /lattice "se-x" lists no applications, so nothing shows that the key is its list; .*rename this resource/);
    assert.equal(await service.metric('wadm_writes_total{operation="put"}'), writesBefore, 'nothing written');
    const healthy = await mc.reconcileUntilStable('tenant-a', 'y-z');
    assert.equal(ready(healthy.object)?.reason, 'Deployed');
    // Deleting it waits too: nothing shows that wadm holds nothing of it. Orphan lets it go.
    const deleting = await mc.deleteAndFinalize('tenant-e', 'x', { maxPasses: 1 });
    assert.equal(deleting.removed, false);
    mc.apply(app('tenant-e', 'x', 'se').with({ deletionPolicy: 'Orphan' }).build() as never);
    assert.equal((await mc.deleteAndFinalize('tenant-e', 'x')).removed, true);
  });
});

describe("deleting a resource whose wadm key holds another lattice's application", () => {
  it('leaves that application and all its versions alone, and names nothing of it', async () => {
    // Lattice kq holds y-z, put straight over wadm's API (as `wash app deploy` would: no owner).
    const manifest = {
      apiVersion: 'core.oam.dev/v1beta1',
      kind: 'Application',
      metadata: { name: 'y-z', annotations: { version: 'v1' } },
      spec: { components: [] },
    };
    assert.equal((await wadmApi('kq', 'put', manifest)).result, 'created');
    assert.equal(
      (await wadmApi('kq', 'put', { ...manifest, metadata: { ...manifest.metadata, annotations: { version: 'v2' } } })).result,
      'newversion',
    );
    const before = await wadmApi('kq', 'versions.y-z');
    // Resource z in lattice kq-y shares the key kq-y-z, and asks to adopt what it finds there.
    const adopter = app('tenant-f', 'z', 'kq-y').unannotated().annotated({ 'core.wasmcloud.com/adopt': 'true' }).build();
    mc.apply(adopter as never);
    const { object } = await mc.waitFor('tenant-f', 'z', (obj) => ready(obj)?.reason === 'NameCollision', {
      timeoutMs: 60_000,
      intervalMs: 100,
    });
    const deletesBefore = await service.metric('wadm_writes_total{operation="delete"}');
    assert.equal((await mc.deleteAndFinalize('tenant-f', 'z')).removed, true);
    assert.deepEqual(await wadmApi('kq', 'versions.y-z'), before, "the other lattice's versions are all there");
    assert.equal(await service.metric('wadm_writes_total{operation="delete"}'), deletesBefore, 'no delete sent');
    assertNamesNoOtherTenant(seenBy('tenant-f', object!), { namespace: 'nobody', name: 'y-z', lattice: 'kq' });
  });
});
