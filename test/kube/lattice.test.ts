// The WasmCloudLattice on a real API server: the commands of docs/lattice.md as written, the
// Metacontroller emulator running manifests/lattice-controller.yaml (reading the cluster-scoped
// parent, writing /status on a resourceVersion precondition), the service in-process, the real wadm
// and simulated hosts with labels joining, stopping and crashing. `kubectl get wasmcloudlattices`
// shows their count as it changes, and `-o yaml` the hosts with their labels and the applications
// with their owners, one of a WasmCloudApplication (driven by the applications' emulator on the
// same API server) and one put with wadm's API.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import { connect, type NatsConnection } from 'nats';
import { PLURAL } from '../../src/schema/crd.js';
import type { WasmCloudLatticeStatus } from '../../src/schema/lattice.js';
import { markedBlock, runBlock } from '../support/doc-blocks.js';
import { startLattice, WADM_STALL_TOLERANT_MS, type SimulatedLattice } from '../support/host-sim.js';
import { startKubeCluster, type KubeCluster } from '../support/kube/cluster.js';
import { installCrd, installLatticeCrd } from '../support/kube/crd.js';
import {
  condition,
  latticeMetacontrollerFor,
  metacontrollerFor,
  WASMCLOUD_APPLICATIONS,
  WASMCLOUD_LATTICES,
  type FakeMetacontroller,
  type K8sObject,
} from '../support/metacontroller.js';
import { KubeParentStore } from '../support/metacontroller/kube-parent-store.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { wasmApp } from '../support/resources.js';
import { putUnowned } from '../support/lattice-resources.js';
import { CleanupStack, startService, type RunningService } from '../support/service.js';
import { startWadm, type WadmProcess } from '../support/wadm.js';
import { sleep, until } from '../support/wait.js';

const ROOT = resolve(import.meta.dirname, '../..');
const LATTICE = 'default';
const WAIT = { timeoutMs: WADM_STALL_TOLERANT_MS, intervalMs: 100 };

let kube: KubeCluster;
let nats: NatsServer;
let wadm: WadmProcess;
let sim: SimulatedLattice;
let running: RunningService;
let nc: NatsConnection;
let apps: FakeMetacontroller<KubeParentStore>;
let lattices: FakeMetacontroller<KubeParentStore>;
const cleanups = new CleanupStack();

before(async () => {
  kube = await startKubeCluster();
  await installCrd(kube);
  await installLatticeCrd(kube);
  nats = await startNatsServer();
  wadm = await startWadm(nats.url);
  sim = await startLattice({
    servers: nats.url,
    lattice: LATTICE,
    hosts: [{ labels: { zone: 'eu' } }, { labels: { zone: 'us' } }],
    heartbeatMs: 500,
    waitForWadm: true,
  });
  running = await startService(cleanups, { NATS_URL: nats.url }, { deployGraceMs: 300, hostHeartbeatMs: 1000, latticeListPeriodMs: 1000 });
  await running.connected();
  nc = await connect({ servers: nats.url });
  apps = metacontrollerFor(running.url, { api: new KubeParentStore(kube.client, { ...WASMCLOUD_APPLICATIONS, plural: PLURAL }) });
  lattices = latticeMetacontrollerFor(running.url, {
    api: new KubeParentStore(kube.client, { ...WASMCLOUD_LATTICES, plural: WASMCLOUD_LATTICES.plural! }),
  });
});
after(async () => {
  await nc?.close();
  await cleanups.run();
  await sim?.stop();
  await wadm?.stop();
  await nats?.dispose();
  await kube?.stop();
});

const status = (obj: K8sObject | undefined) => obj?.status as WasmCloudLatticeStatus | undefined;

/** The emulator reconciles the lattice (as resyncs would) until its status satisfies `predicate`. */
async function latticeUntil(predicate: (s: WasmCloudLatticeStatus, obj: K8sObject) => boolean): Promise<WasmCloudLatticeStatus> {
  const { object } = await lattices.waitFor('', LATTICE, (obj) => status(obj) !== undefined && predicate(status(obj)!, obj!), WAIT);
  return status(object)!;
}

/** `kubectl get wasmcloudlattices`, as rows of cells. */
async function table(): Promise<string[][]> {
  return (await kube.kubectlOk(['get', 'wasmcloudlattices']))
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s{2,}/));
}

/** The lines printed after `$ <command>` in a console block of docs/lattice.md. */
function pageOutput(command: string): string[] {
  const lines = readFileSync(resolve(ROOT, 'docs/lattice.md'), 'utf8').split('\n');
  const start = lines.indexOf(`$ ${command}`);
  assert.ok(start !== -1, `docs/lattice.md shows \`${command}\``);
  return lines.slice(start + 1, lines.indexOf('```', start));
}

describe('docs/lattice.md on a real API server', () => {
  it('runs "A lattice" as written: the example applies, kubectl wait sees Ready, kubectl get prints the page\'s columns', async () => {
    // The applications of the lattice: one of a resource, on the same API server, and one put with wadm's API.
    await apps.apply(wasmApp().inLattice(LATTICE).build() as never);
    await apps.waitFor('default', 'hello-world', (obj) => condition(obj, 'Ready')?.status === 'True', WAIT);
    await putUnowned(nc, LATTICE, 'washed', true);

    // The service has listened to the lattice's hosts for a heartbeat period already, as one that
    // has been running for a while has: the first answer lists every host.
    await until(
      () => {
        const view = running.service.hosts.view(LATTICE);
        return view.watching && view.hosts.length === 2 && Date.now() >= view.since + 1000;
      },
      { what: 'the service heard both hosts for a heartbeat period', timeoutMs: 30_000 },
    );
    const block = markedBlock('docs/lattice.md', 'lattice-get');
    const env = { KUBECONFIG: kube.kubeconfig, PATH: `${dirname(process.env['KUBECTL_BIN']!)}:${process.env['PATH']}` };
    const run = runBlock(block, { cwd: ROOT, env });
    // Metacontroller's part while the commands run: the lattice is reconciled as resyncs would.
    while (!run.exited()) {
      if ((await kube.kubectl(['get', 'wasmcloudlattice', LATTICE])).code === 0) await lattices.reconcile('', LATTICE);
      await sleep(100);
    }
    const { code, stdout, output } = await run.done;
    assert.equal(code, 0, output);
    assert.match(stdout, /wasmcloudlattice\.core\.wasmcloud\.com\/default condition met/);
    const printed = stdout
      .trim()
      .split('\n')
      .slice(-2)
      .map((line) => line.trim().split(/\s{2,}/));
    const shown = pageOutput('kubectl get wasmcloudlattices').map((line) => line.trim().split(/\s{2,}/));
    assert.deepEqual(printed[0], shown[0]);
    assert.deepEqual(printed[1]!.slice(0, 3), shown[1]!.slice(0, 3), 'NAME, HOSTS and, once both are listed, APPS');
    assert.equal(printed[1]![3], 'True');
  });

  it('-o yaml lists the hosts with their labels and the applications with their owners, as the page shows', async () => {
    await latticeUntil((s) => s.applicationCount === 2 && (s.applications ?? []).every((a) => a.owner !== undefined || a.unowned));
    const live = yaml.load(await kube.kubectlOk(['get', 'wasmcloudlattice', LATTICE, '-o', 'yaml'])) as { status: WasmCloudLatticeStatus };
    const shown = (
      yaml.load(pageOutput(`kubectl get wasmcloudlattice ${LATTICE} -o yaml`).join('\n')) as { status: WasmCloudLatticeStatus }
    ).status;
    const { status: s } = live;
    assert.deepEqual(
      s.hosts!.map((h) => [h.friendlyName, h.labels]),
      shown.hosts!.map((h) => [h.friendlyName, h.labels]),
    );
    assert.deepEqual(
      s.applications!.map(({ name, status, owner, unowned }) => ({ name, status, owner, unowned })),
      shown.applications!.map(({ name, status, owner, unowned }) => ({ name, status, owner, unowned })),
    );
    assert.equal(s.applications![0]!.owner, 'default/hello-world');
    assert.equal(s.applications![1]!.unowned, true);
    for (const key of Object.keys(shown)) assert.ok(key in s, `the page shows status.${key}, the service writes it`);
  });

  it('shows hosts joining, stopping and crashing in HOSTS, and READY False once none is left (spec.minHosts 1)', async () => {
    const row = async () => (await table())[1]!.slice(0, 4);
    const joined = await sim.addHost({ labels: { zone: 'ap' } });
    await latticeUntil((s) => s.hostCount === 3);
    assert.deepEqual(await row(), [LATTICE, '3', '2', 'True']);
    await sim.stopHost(joined.id);
    await latticeUntil((s) => s.hostCount === 2);
    assert.deepEqual(await row(), [LATTICE, '2', '2', 'True']);
    sim.crashHost(sim.hosts.find((h) => h.labels['zone'] === 'us')!.id);
    await latticeUntil((s) => s.hostCount === 1);
    assert.deepEqual(await row(), [LATTICE, '1', '2', 'True']);
    sim.crashHost(sim.hosts[0]!.id);
    const s = await latticeUntil((s) => s.hostCount === 0);
    assert.deepEqual(await row(), [LATTICE, '0', '2', 'False']);
    assert.match(s.message!, /^1 host needed \(spec\.minHosts\); 0 hosts heartbeating$/);
    assert.equal(condition({ status: s } as K8sObject, 'Reconciling')?.reason, 'HostsMissing');
  });
});
