// Installs CRDs on a test cluster the way a user does, and waits until they are served:
// manifests/crd.yaml from its file, or CRDs a test generates, from standard input.
import { resolve } from 'node:path';
import { GROUP, PLURAL } from '../../../src/schema/crd.js';
import type { KubeCluster } from './cluster.js';

const CRD_FILE = resolve(import.meta.dirname, '../../../manifests/crd.yaml');
export const CRD_NAME = `${PLURAL}.${GROUP}`;

/** `kubectl apply -f manifests/crd.yaml`, then `kubectl wait --for=condition=Established`; returns apply's stderr (warnings). */
export async function installCrd(kube: KubeCluster): Promise<string> {
  const run = await kube.kubectl(['apply', '-f', CRD_FILE]);
  if (run.code !== 0) throw new Error(`kubectl apply -f manifests/crd.yaml failed:\n${run.stderr}`);
  await untilEstablished(kube, [CRD_NAME]);
  return run.stderr;
}

/** `kubectl apply -f -` of CRD YAML, then waits until each of `names` is Established; returns apply's stderr (warnings). */
export async function applyCrds(kube: KubeCluster, yamlText: string, names: string[]): Promise<string> {
  const run = await kube.kubectl(['apply', '-f', '-'], { input: yamlText });
  if (run.code !== 0) throw new Error(`kubectl apply of the generated CRDs failed:\n${run.stderr}`);
  await untilEstablished(kube, names);
  return run.stderr;
}

async function untilEstablished(kube: KubeCluster, names: string[]): Promise<void> {
  await kube.kubectlOk(['wait', '--for=condition=Established', ...names.map((name) => `crd/${name}`), '--timeout=120s']);
}

/** The status of each condition of an installed CRD, by type (Established, NamesAccepted, ...). */
export async function crdConditions(kube: KubeCluster, name: string): Promise<Record<string, string>> {
  const crd = JSON.parse(await kube.kubectlOk(['get', 'crd', name, '-o', 'json']));
  return Object.fromEntries(crd.status.conditions.map((c: { type: string; status: string }) => [c.type, c.status]));
}
