// An install on the real kube-apiserver, brought to life without a kubelet or Metacontroller: the
// installed Deployment's image run as its pod would run (container.ts: its securityContext, its
// ConfigMap's variables, the image pulled by the reference the Deployment names), and the
// Metacontroller emulator calling the hooks the installed CompositeController names, through the
// installed Service's port. Used by the release tier (test/release) and npm test's README install
// (test/image/readme-install.test.ts), on the Docker engine of their scripts.
import assert from 'node:assert/strict';
import { docker, environmentFlags, securityFlags, statusOf, type Obj } from './container.js';
import type { KubeCluster } from './kube/cluster.js';
import { FakeMetacontroller, WASMCLOUD_APPLICATIONS } from './metacontroller.js';
import { KubeParentStore } from './metacontroller/kube-parent-store.js';
import { freePort } from './ports.js';
import { until } from './wait.js';
import { PLURAL } from '../../src/schema/crd.js';

const WAIT_MS = 120_000; // for states, on 2 shared cores

export interface RunningInstall {
  /** The emulator, driving the container through the installed hooks, parents on the real API server. */
  metacontroller: FakeMetacontroller<KubeParentStore>;
  /** The image the Deployment names, as the container was started from it. */
  image: string;
  /** The installed ConfigMap's variables, as the pod reads them with envFrom. */
  variables: Record<string, string>;
}

async function getJson(kube: KubeCluster, ...args: string[]): Promise<Obj> {
  return JSON.parse(await kube.kubectlOk(['get', ...args, '-o', 'json'])) as Obj;
}

/**
 * Runs the installed Deployment's container as `name` with host networking: only PORT and HOST
 * differ from its ConfigMap (a free loopback port instead of the pod's own network), and any of
 * `overrides`. `checkImage` sees the Deployment's image before anything is pulled.
 */
export async function runInstalled(
  kube: KubeCluster,
  name: string,
  options: { overrides?: Record<string, string>; checkImage?: (image: string) => void } = {},
): Promise<RunningInstall> {
  const controller = ((await getJson(kube, 'compositecontrollers'))['items'] as Obj[]).find(
    (cc) => cc['metadata'].name === 'wasmcloudapplication-controller',
  );
  assert.ok(controller, "the applications' CompositeController is installed");
  const hooks = controller['spec'].hooks as Record<'sync' | 'finalize', Obj>;
  const service = hooks.sync['webhook'].service as Obj;
  const installedService = await getJson(kube, 'service', '-n', service['namespace'], service['name']);
  const port = (installedService['spec'].ports as Obj[]).find((p) => p['port'] === service['port']);
  assert.ok(port, `the Service has the hooks' port ${service['port']}`);
  const deployment = await getJson(kube, 'deployment', '-n', service['namespace'], '-l', 'app.kubernetes.io/name=wasmcloud-metacontroller');
  const [installed] = deployment['items'] as Obj[];
  assert.ok(installed, 'a Deployment is installed');
  const container = installed['spec'].template.spec.containers[0] as Obj;
  const image = String(container['image']);
  options.checkImage?.(image);
  assert.ok(
    (container['ports'] as Obj[]).some((p) => p['name'] === port['targetPort'] || p['containerPort'] === port['targetPort']),
    "the Service's targetPort is the container's",
  );
  const [configMap] = (container['envFrom'] as Obj[]).map((e) => e['configMapRef'].name as string);
  const variables = (await getJson(kube, 'configmap', '-n', service['namespace'], configMap!))['data'] as Record<string, string>;
  const listen = await freePort();
  const env = environmentFlags(variables, { ...options.overrides, PORT: String(listen), HOST: '127.0.0.1' });
  const started = docker(['run', '-d', '--name', name, '--network', 'host', ...securityFlags(installed), ...env, image]);
  assert.equal(started.code, 0, started.stderr);
  const base = `http://127.0.0.1:${listen}`;
  await until(async () => (await statusOf(`${base}/readyz`)) === 200, {
    what: `${base}/readyz answers 200`,
    timeoutMs: WAIT_MS,
    intervalMs: 200,
  });
  const resource = { ...WASMCLOUD_APPLICATIONS, plural: PLURAL };
  const metacontroller = new FakeMetacontroller({
    syncUrl: `${base}${hooks.sync['webhook'].path}`,
    finalizeUrl: `${base}${hooks.finalize['webhook'].path}`,
    resource,
    api: new KubeParentStore(kube.client, resource),
  });
  return { metacontroller, image, variables };
}
