// Installs CRDs on a test cluster the way a user does, and waits until they are served:
// manifests/crd.yaml from its file, or CRDs a test generates, from standard input.
import { resolve } from 'node:path';
import { GROUP, PLURAL } from '../../../src/schema/crd.js';
import { LATTICE_PLURAL } from '../../../src/schema/lattice-crd.js';
import type { KubeCluster } from './cluster.js';

const CRD_FILE = resolve(import.meta.dirname, '../../../manifests/crd.yaml');
const LATTICE_CRD_FILE = resolve(import.meta.dirname, '../../../manifests/lattice-crd.yaml');
export const CRD_NAME = `${PLURAL}.${GROUP}`;
export const LATTICE_CRD_NAME = `${LATTICE_PLURAL}.${GROUP}`;

/** `kubectl apply -f manifests/crd.yaml`, then `kubectl wait --for=condition=Established`; returns apply's stderr (warnings). */
export async function installCrd(kube: KubeCluster): Promise<string> {
  return installCrdFile(kube, CRD_FILE, CRD_NAME);
}

/** The same for the WasmCloudLattice CRD, manifests/lattice-crd.yaml. */
export async function installLatticeCrd(kube: KubeCluster): Promise<string> {
  return installCrdFile(kube, LATTICE_CRD_FILE, LATTICE_CRD_NAME);
}

async function installCrdFile(kube: KubeCluster, file: string, name: string): Promise<string> {
  const run = await kube.kubectl(['apply', '-f', file]);
  if (run.code !== 0) throw new Error(`kubectl apply -f ${file} failed:\n${run.stderr}`);
  await untilEstablished(kube, [name]);
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
