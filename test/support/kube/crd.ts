// Installs manifests/crd.yaml on a test cluster the way a user does, and waits until it is served.
import { resolve } from 'node:path';
import { GROUP, PLURAL } from '../../../src/schema/crd.js';
import type { KubeCluster } from './cluster.js';

const CRD_FILE = resolve(import.meta.dirname, '../../../manifests/crd.yaml');
export const CRD_NAME = `${PLURAL}.${GROUP}`;

/** `kubectl apply -f manifests/crd.yaml`, then `kubectl wait --for=condition=Established`; returns apply's stderr (warnings). */
export async function installCrd(kube: KubeCluster): Promise<string> {
  const run = await kube.kubectl(['apply', '-f', CRD_FILE]);
  if (run.code !== 0) throw new Error(`kubectl apply -f manifests/crd.yaml failed:\n${run.stderr}`);
  await kube.kubectlOk(['wait', '--for=condition=Established', `crd/${CRD_NAME}`, '--timeout=120s']);
  return run.stderr;
}
