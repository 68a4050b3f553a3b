// The whole chain with a real API server: `kubectl apply` → kube-apiserver → the Metacontroller emulator (reading
// the parent, writing /status on a resourceVersion precondition, adding and removing its finalizer) → our service →
// real wadm → simulated hosts. What reaches the API server is judged by the real thing: the status schema, the
// status subresource, generation and finalizer semantics, and `kubectl wait`. The same server checks that the
// in-memory FakeApiServer of the fast tiers keeps the rules a hook can observe.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PLURAL } from '../../src/schema/crd.js';
import { startKubeCluster, type KubeCluster } from '../support/kube/cluster.js';
import { installCrd } from '../support/kube/crd.js';
import { startLattice, WADM_STALL_TOLERANT_MS, type SimulatedLattice } from '../support/host-sim.js';
import { FakeMetacontroller, metacontrollerFor, condition, type K8sObject } from '../support/metacontroller.js';
import { ApiError, FakeApiServer, type ParentStore } from '../support/metacontroller/api-server.js';
import { KubeParentStore } from '../support/metacontroller/kube-parent-store.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { CleanupStack, startService, type RunningService } from '../support/service.js';
import { startWadm, type WadmProcess } from '../support/wadm.js';
import { wasmApp, type AppBuilder } from '../support/resources.js';

const LATTICE = 'kube-e2e';
const NAME = 'hello-world';
const RESOURCE = { apiVersion: 'core.wasmcloud.com/v1beta1', kind: 'WasmCloudApplication', plural: PLURAL };

let kube: KubeCluster;
let nats: NatsServer;
let wadm: WadmProcess;
let sim: SimulatedLattice;
let running: RunningService;
let store: KubeParentStore;
const cleanups = new CleanupStack();

before(async () => {
  kube = await startKubeCluster();
  await installCrd(kube);
  nats = await startNatsServer();
  wadm = await startWadm(nats.url);
  sim = await startLattice({ servers: nats.url, lattice: LATTICE, hosts: [{ labels: {} }], heartbeatMs: 500, waitForWadm: true });
  running = await startService(cleanups, { NATS_URL: nats.url }, { deployGraceMs: 2000 });
  await running.connected();
  store = new KubeParentStore(kube.client, RESOURCE);
});
after(async () => {
  await cleanups.run();
  await sim?.stop();
  await wadm?.stop();
  await nats?.dispose();
  await kube?.stop();
});

const metacontroller = (): FakeMetacontroller<KubeParentStore> => metacontrollerFor(running.url, { api: store, resource: RESOURCE });

const inKubeLattice = (): AppBuilder => wasmApp().inLattice(LATTICE);
const status = (obj: K8sObject) =>
  obj.status as { phase?: string; version?: string; deployedVersion?: string; observedGeneration?: number };
const ready = (obj: K8sObject | undefined) => condition(obj, 'Ready')?.status === 'True';

/** Reconciles (as resyncs and watch events would) until the parent satisfies `predicate`. */
async function until(mc: FakeMetacontroller<KubeParentStore>, predicate: (obj: K8sObject) => boolean): Promise<K8sObject> {
  const { object } = await mc.waitFor('default', NAME, (obj) => obj !== undefined && predicate(obj), {
    timeoutMs: WADM_STALL_TOLERANT_MS,
    intervalMs: 100,
  });
  return object!;
}

describe('Metacontroller emulator on a real API server, with real wadm and simulated hosts', () => {
  it('drives create → Ready → edit → revert → suspend → delete, and kubectl wait sees Ready', async () => {
    const mc = metacontroller();
    await kube.kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(inKubeLattice().build()) });
    const waiting = kube.kubectl(['wait', '--for=condition=Ready', `wcapp/${NAME}`, '--timeout=120s']);

    const created = await until(mc, (obj) => ready(obj));
    assert.equal((await waiting).code, 0, 'kubectl wait --for=condition=Ready returns once the condition is True');
    const v1 = status(created).version!;
    assert.equal(status(created).phase, 'Deployed');
    assert.equal(status(created).deployedVersion, v1);
    assert.equal(status(created).observedGeneration, 1);
    assert.deepEqual(created.metadata.finalizers, [mc.finalizerName]);
    const managers = (created.metadata.managedFields ?? []).map((m) => `${m.manager}:${m.operation}:${m.subresource ?? ''}`).sort();
    assert.deepEqual(managers, ['kubectl-client-side-apply:Update:', 'metacontroller:Update:', 'metacontroller:Update:status']);
    assert.equal(sim.components().length, 1, 'the host runs the component');

    await kube.kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(inKubeLattice().described('edited').build()) });
    const edited = await until(mc, (obj) => ready(obj) && status(obj).version !== v1 && status(obj).observedGeneration === 2);
    assert.equal(edited.metadata.generation, 2);

    await kube.kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(inKubeLattice().build()) });
    const reverted = await until(mc, (obj) => ready(obj) && status(obj).observedGeneration === 3);
    assert.equal(status(reverted).version, v1, 'the earlier version is deployed again');

    await kube.kubectlOk(['patch', 'wcapp', NAME, '--type=merge', '-p', '{"spec":{"suspend":true}}']);
    const paused = await until(mc, (obj) => status(obj).phase === 'Suspended' && status(obj).observedGeneration === 4);
    assert.equal(condition(paused, 'Ready')?.status, 'False');

    const deleted = await mc.deleteAndFinalize('default', NAME, { maxPasses: 30, honourResync: 'real' });
    assert.equal(deleted.removed, true, 'the finalize hook let the finalizer go');
    const get = await kube.kubectl(['get', 'wcapp', NAME]);
    assert.match(get.stderr, /NotFound/);
  });
});

/**
 * The same writes on a store, and what a client can observe of each: generation, whether resourceVersion moved,
 * deletion, and refusals. The fast tiers trust FakeApiServer to keep these rules; the real server checks it here.
 */
async function observe(api: ParentStore, name: string): Promise<string[]> {
  const seen: string[] = [];
  let rv = '';
  const look = (step: string): void => {
    const obj = api.get('default', name);
    const moved = obj?.metadata.resourceVersion !== rv;
    rv = obj?.metadata.resourceVersion ?? '';
    seen.push(
      obj
        ? `${step}: generation ${obj.metadata.generation}, ${moved ? 'new' : 'same'} resourceVersion, ` +
            `${obj.metadata.deletionTimestamp ? 'deleting' : 'live'}, finalizers ${json(obj.metadata.finalizers ?? [])}`
        : `${step}: gone`,
    );
  };
  const refused = async (step: string, write: () => unknown): Promise<void> => {
    try {
      await write();
      seen.push(`${step}: accepted`);
    } catch (error) {
      seen.push(`${step}: ${error instanceof ApiError ? error.code : String(error)}`);
    }
  };
  const base = inKubeLattice().named(name).inNamespace('default').unannotated();
  await api.apply(base.build());
  look('create');
  await api.apply(base.build());
  look('identical apply');
  await api.apply(base.labelled({ team: 'edge' }).build());
  look('label');
  await api.apply(base.labelled({ team: 'edge' }).suspended().build());
  look('spec change');
  const stale = api.get('default', name)!.metadata.resourceVersion!;
  await api.updateStatus('default', name, { phase: 'Deployed' }, { resourceVersion: stale });
  look('status');
  await api.updateStatus('default', name, { phase: 'Deployed' });
  look('same status');
  await refused('status on a stale resourceVersion', () =>
    api.updateStatus('default', name, { phase: 'Failed' }, { resourceVersion: stale }),
  );
  await api.updateFinalizers('default', name, (list) => [...list, 'example.com/keep']);
  look('finalizer');
  await api.delete('default', name);
  look('delete');
  await refused('new finalizer while deleting', () => api.updateFinalizers('default', name, (list) => [...list, 'example.com/late']));
  await api.updateFinalizers('default', name, () => []);
  look('last finalizer removed');
  return seen;
}

const json = (value: unknown): string => JSON.stringify(value);

describe('the in-memory API server of the fast tiers', () => {
  it('keeps the rules of kube-apiserver that a hook can observe', async () => {
    const fake = new FakeApiServer(RESOURCE);
    const real = await observe(store, 'rules');
    assert.equal(real.length, 11, 'every step observed');
    assert.deepEqual(await observe(fake, 'rules'), real);
  });
});
