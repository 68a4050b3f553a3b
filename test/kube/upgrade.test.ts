// Upgrading from the previous release, on a real API server: 0.1.0's install.yaml (test/fixtures/releases/0.1.0)
// applied, WasmCloudApplications settled by 0.1.0's own hook service (built from its commit) through the Metacontroller
// emulator, real wadm and simulated hosts; then the new release applied with `kubectl apply`, or taken over by
// `helm upgrade --install` (0.1.0 shipped no chart). After either: the CRD still serves and stores v1beta1 with the
// new status fields, every resource keeps its spec and status byte for byte, and the new service answers each one
// with the status 0.1.0 wrote, so Metacontroller writes nothing on upgrade; every resource can still be deleted, and
// helm uninstall keeps them. The new release is `RELEASE_DIR` (install.yaml and the packaged chart) or built from
// this tree. docs/install.md (Upgrade) says the same to users.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import yaml from 'js-yaml';
import { PLURAL } from '../../src/schema/crd.js';
import { startKubeCluster, type KubeCluster } from '../support/kube/cluster.js';
import { CRD_NAME } from '../support/kube/crd.js';
import { startLattice, type SimulatedLattice } from '../support/host-sim.js';
import { metacontrollerFor, type FakeMetacontroller, type K8sObject } from '../support/metacontroller.js';
import { KubeParentStore } from '../support/metacontroller/kube-parent-store.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { buildPreviousService, newRelease, previousRelease, type NewRelease } from '../support/releases.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { startWadm, type WadmProcess } from '../support/wadm.js';
import { wasmApp, type AppBuilder } from '../support/resources.js';
import { until } from '../support/wait.js';

const PREVIOUS = previousRelease('0.1.0');
const LATTICE = 'upgrade';
const NAMESPACE = 'wasmcloud-metacontroller';
const RESOURCE = { apiVersion: 'core.wasmcloud.com/v1beta1', kind: 'WasmCloudApplication', plural: PLURAL };
const METACONTROLLER_CRD = resolve(import.meta.dirname, '../fixtures/kube/compositecontroller-crd.yaml');

let release: NewRelease;
let nats: NatsServer;
let wadm: WadmProcess;
let sim: SimulatedLattice;
let previousService: ServiceProcess;
let newService: ServiceProcess;

before(async () => {
  release = newRelease();
  const previousRoot = buildPreviousService(PREVIOUS);
  nats = await startNatsServer();
  wadm = await startWadm(nats.url);
  sim = await startLattice({ servers: nats.url, lattice: LATTICE, hosts: [{ labels: {} }], heartbeatMs: 500, waitForWadm: true });
  previousService = await startServiceProcess({ NATS_URL: nats.url }, { root: previousRoot });
  newService = await startServiceProcess({ NATS_URL: nats.url });
  await until(async () => (await newService.ready()) === 200, { what: 'the new service is ready', timeoutMs: 60_000 });
});
after(async () => {
  await newService?.stop();
  await previousService?.stop();
  await sim?.stop();
  await wadm?.stop();
  await nats?.dispose();
});

/** What the upgrade must keep of one resource: its bytes as served, and whether anything wrote it. */
interface Kept {
  resourceVersion: string;
  generation: number;
  spec: string;
  status: string;
}

/** One cluster with 0.1.0 installed and its applications settled by 0.1.0's service. */
class PreviousInstall {
  private constructor(
    readonly kube: KubeCluster,
    readonly names: { namespace: string; name: string }[],
    readonly settled: Map<string, Kept>,
  ) {}

  /** `prefix` keeps the applications of two clusters apart in the one wadm. */
  static async create(prefix: string): Promise<PreviousInstall> {
    const kube = await startKubeCluster();
    try {
      await kube.kubectlOk(['apply', '-f', METACONTROLLER_CRD]);
      await kube.kubectlOk(['apply', '-f', PREVIOUS.installYaml]);
      await kube.kubectlOk(['wait', '--for=condition=Established', `crd/${CRD_NAME}`, '--timeout=120s']);
      await kube.kubectlOk(['create', 'namespace', 'team-b']);
      const app = wasmApp().inLattice(LATTICE);
      const apps: [AppBuilder, string][] = [
        [app.named(`${prefix}-hello`), 'Deployed'],
        [app.named(`${prefix}-other-team`).inNamespace('team-b'), 'Deployed'],
        [app.named(`${prefix}-paused`).suspended(), 'Suspended'],
        // Accepted by 0.1.0's CRD, refused by its hook (the new CRD refuses it at apply time).
        [app.named(`${prefix}-invalid`).pinned('latest'), 'Invalid'],
        // Refused by 0.1.0's hook (no dots in a wadm name), by the new CRD's rule on metadata.name.
        [app.named(`${prefix}-dotted.name`), 'Invalid'],
      ];
      const items = apps.map(([b]) => b.build());
      await kube.kubectlOk(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }) });
      const names = items.map((a) => ({ namespace: a.metadata.namespace, name: a.metadata.name }));
      const mc = emulator(kube, previousService);
      for (const [i, { namespace, name }] of names.entries()) await settle(mc, namespace, name, apps[i]![1]);
      return new PreviousInstall(kube, names, await keptOf(kube));
    } catch (error) {
      await kube.stop();
      throw error;
    }
  }

  /** One pass of the emulator per resource, driving the new service: what Metacontroller would do after the upgrade. */
  /** Each pass as `key: HTTP status, status written or not` (a failed call writes nothing, so it must show). */
  async syncWithNewService(): Promise<string[]> {
    const mc = emulator(this.kube, newService);
    const passes: string[] = [];
    for (const { namespace, name } of this.names) {
      const pass = await mc.reconcile(namespace, name);
      passes.push(`${namespace}/${name}: ${pass.httpStatus ?? pass.error}, ${pass.statusChanged ? 'status written' : 'nothing written'}`);
    }
    return passes;
  }
}

const emulator = (kube: KubeCluster, service: ServiceProcess): FakeMetacontroller<KubeParentStore> =>
  metacontrollerFor(service.url, { api: new KubeParentStore(kube.client, RESOURCE), resource: RESOURCE });

/** Reconciles as Metacontroller would until a pass writes and schedules nothing; Ready or refused by then. */
async function settle(mc: FakeMetacontroller<KubeParentStore>, namespace: string, name: string, phase: string): Promise<void> {
  const { object } = await mc.reconcileUntilStable(namespace, name, { honourResync: 'real', maxPasses: 90 });
  assert.equal(
    (object?.status as { phase?: string } | undefined)?.phase,
    phase,
    `${namespace}/${name} under 0.1.0: ${JSON.stringify(object?.status)}`,
  );
}

async function keptOf(kube: KubeCluster): Promise<Map<string, Kept>> {
  const list = (await kube.client.request<{ items: K8sObject[] }>('GET', `/apis/${RESOURCE.apiVersion}/${PLURAL}`)).body;
  return new Map(
    list.items.map((o) => [
      `${o.metadata.namespace}/${o.metadata.name}`,
      {
        resourceVersion: o.metadata.resourceVersion!,
        generation: o.metadata.generation!,
        spec: JSON.stringify(o['spec']),
        status: JSON.stringify(o.status),
      },
    ]),
  );
}

/** The CRD as served: its versions and storedVersions, and the status fields its schema keeps. */
async function servedCrd(kube: KubeCluster) {
  const crd = JSON.parse(await kube.kubectlOk(['get', 'crd', CRD_NAME, '-o', 'json']));
  const versions = (crd.spec.versions as { name: string; served: boolean; storage: boolean; schema: any }[]).map(
    ({ name, served, storage }) => ({ name, served, storage }),
  );
  const statusFields = Object.keys(crd.spec.versions[0].schema.openAPIV3Schema.properties.status.properties).sort();
  return { versions, storedVersions: crd.status.storedVersions as string[], statusFields };
}

/** The status fields of the new release's CRD. */
function newStatusFields(): string[] {
  const crd = (yaml.loadAll(readFileSync(release.installYaml, 'utf8')) as any[]).find((o) => o?.kind === 'CustomResourceDefinition');
  return Object.keys(crd.spec.versions[0].schema.openAPIV3Schema.properties.status.properties).sort();
}

/** The objects of 0.1.0's install.yaml that the new one no longer has, as `Kind/name`: what `kubectl apply` leaves. */
function leftBehind(): string[] {
  const ids = (file: string) =>
    new Set((yaml.loadAll(readFileSync(file, 'utf8')) as any[]).filter(Boolean).map((o) => `${o.kind}/${o.metadata.name}`));
  const now = ids(release.installYaml);
  return [...ids(PREVIOUS.installYaml)].filter((id) => !now.has(id));
}

/** What every upgrade must keep: the CRD's versions, each resource as 0.1.0 left it, and nothing to write. */
async function assertKept(install: PreviousInstall): Promise<void> {
  const crd = await servedCrd(install.kube);
  assert.deepEqual(crd.versions, [{ name: 'v1beta1', served: true, storage: true }]);
  assert.deepEqual(crd.storedVersions, ['v1beta1']);
  assert.deepEqual(crd.statusFields, newStatusFields(), 'the served schema keeps the new status fields');
  assert.deepEqual(await keptOf(install.kube), install.settled, 'every resource as 0.1.0 left it, not even rewritten');
  const passes = await install.syncWithNewService();
  assert.deepEqual(await keptOf(install.kube), install.settled, "the new service answers each resource with 0.1.0's status");
  assert.deepEqual(
    passes,
    install.names.map(({ namespace, name }) => `${namespace}/${name}: 200, nothing written`),
  );
}

describe('upgrading from 0.1.0 with kubectl apply', () => {
  let install: PreviousInstall;
  before(async () => {
    install = await PreviousInstall.create('kubectl');
  });
  after(() => install?.kube.stop());

  it("applies over 0.1.0's objects and keeps every resource and status", async () => {
    await install.kube.kubectlOk(['apply', '-f', release.installYaml]);
    await install.kube.kubectlOk(['wait', '--for=condition=Established', `crd/${CRD_NAME}`, '--timeout=120s']);
    await assertKept(install);
    // What the docs say to delete by hand: 0.1.0's ConfigMap, named by a hash of its content.
    for (const id of leftBehind()) {
      assert.match(id, /^ConfigMap\/wasmcloud-metacontroller-[a-z0-9]{10}$/);
      await install.kube.kubectlOk(['get', '--namespace', NAMESPACE, id]);
    }
  });

  it('lets every resource be deleted afterwards, finalized by the new service', async () => {
    const mc = emulator(install.kube, newService);
    for (const { namespace, name } of install.names) {
      const deleted = await mc.deleteAndFinalize(namespace, name, { maxPasses: 30, honourResync: 'real' });
      assert.ok(deleted.removed, `${namespace}/${name}: ${JSON.stringify(deleted.results.at(-1))}`);
    }
  });
});

describe('upgrading from 0.1.0 with helm upgrade --install', () => {
  let install: PreviousInstall;
  before(async () => {
    install = await PreviousInstall.create('helm');
  });
  after(() => install?.kube.stop());

  it("takes over 0.1.0's objects and keeps every resource and status", async () => {
    assert.equal(PREVIOUS.chart, undefined, '0.1.0 shipped no chart: its users come from install.yaml');
    await adoptIntoHelm(install.kube);
    await install.kube.helmOk([
      'upgrade',
      '--install',
      'wasmcloud-metacontroller',
      release.chart,
      '--namespace',
      NAMESPACE,
      '--wait=false',
    ]);
    await assertKept(install);
  });

  it('helm uninstall leaves the CRD and every resource (helm.sh/resource-policy: keep)', async () => {
    await install.kube.helmOk(['uninstall', 'wasmcloud-metacontroller', '--namespace', NAMESPACE, '--wait=false']);
    assert.deepEqual((await servedCrd(install.kube)).storedVersions, ['v1beta1']);
    assert.deepEqual(await keptOf(install.kube), install.settled);
  });
});

/** The docs' commands that let Helm own what `kubectl apply` installed: its release's annotations and label. */
async function adoptIntoHelm(kube: KubeCluster): Promise<void> {
  const objects = ['-f', PREVIOUS.installYaml];
  await kube.kubectlOk([
    'annotate',
    '--overwrite',
    ...objects,
    `meta.helm.sh/release-name=wasmcloud-metacontroller`,
    `meta.helm.sh/release-namespace=${NAMESPACE}`,
  ]);
  await kube.kubectlOk(['label', '--overwrite', ...objects, 'app.kubernetes.io/managed-by=Helm']);
}
