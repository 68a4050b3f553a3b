// The chart's objects judged by a real kube-apiserver (scripts/test-deps.sh builds it): rendered
// with the defaults, with hardened hooks, with every option and with examples/existing-lattice's
// values, each object of a built-in kind is accepted by a server-side dry run, so a field the API
// server refuses (a duplicate port name, a wrong type, a bad selector) fails here rather than at
// `helm install`. Kinds of CRDs the test cluster does not have (CompositeController, cert-manager,
// Prometheus Operator) are left out.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startKubeCluster, type KubeCluster } from '../support/kube/cluster.js';
import { ALL_OPTIONS, NAMESPACE, renderChart, type Obj } from '../support/helm.js';

const BUILT_IN = new Set([
  'Namespace',
  'CustomResourceDefinition',
  'ServiceAccount',
  'ConfigMap',
  'Service',
  'Deployment',
  'PodDisruptionBudget',
  'NetworkPolicy',
  'ClusterRole',
]);

let kube: KubeCluster;
before(async () => {
  kube = await startKubeCluster();
  // The namespaced objects' dry runs need their namespace to exist.
  await kube.kubectlOk(['create', 'namespace', NAMESPACE]);
});
after(() => kube?.stop());

async function dryRun(objects: Obj[]): Promise<string[]> {
  const applied = objects.filter((o) => BUILT_IN.has(o['kind']) && o['kind'] !== 'Namespace');
  const list = { apiVersion: 'v1', kind: 'List', items: applied };
  const run = await kube.kubectl(['apply', '--dry-run=server', '-o', 'name', '-f', '-'], { input: JSON.stringify(list) });
  assert.equal(run.code, 0, run.stderr);
  return run.stdout.trim().split('\n').sort();
}

describe('the chart on a real API server', () => {
  for (const [what, args] of [
    ['the defaults', []],
    ['hardened hooks', ['--set', 'hooks.secure.enabled=true']],
    ['every option', ['--values', ALL_OPTIONS]],
    ['examples/existing-lattice/values.yaml', ['--values', 'examples/existing-lattice/values.yaml']],
  ] as const) {
    it(`accepts every built-in object rendered with ${what}`, async () => {
      const objects = renderChart(...args);
      const accepted = await dryRun(objects);
      const expected = objects.filter((o) => BUILT_IN.has(o['kind']) && o['kind'] !== 'Namespace');
      assert.equal(accepted.length, expected.length, accepted.join('\n'));
      assert.ok(expected.some((o) => o['kind'] === 'Deployment') && expected.some((o) => o['kind'] === 'CustomResourceDefinition'));
    });
  }
});
