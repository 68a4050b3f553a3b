// Who may read and declare WasmCloudLattices, on a real API server with RBAC on and
// kube-controller-manager's role aggregation beside it: `kubectl apply -k manifests/`, then the
// bindings of docs/lattice.md as written. The platform team declares lattices; whoever holds view
// cluster-wide reads them; a tenant, even admin of its namespace, reads none (they are
// cluster-scoped, and their status names other namespaces' applications); nobody writes a status.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, resolve } from 'node:path';
import { LATTICE_PLURAL } from '../../src/schema/lattice-crd.js';
import { markedBlock, runBlock } from '../support/doc-blocks.js';
import { startKubeCluster, type KubeCluster } from '../support/kube/cluster.js';
import { CRD_NAME, LATTICE_CRD_NAME } from '../support/kube/crd.js';
import { until } from '../support/wait.js';

const ROOT = resolve(import.meta.dirname, '../..');
const STUB_CRD = resolve(ROOT, 'test/fixtures/kube/compositecontroller-crd.yaml');
const LATTICE = resolve(ROOT, 'examples/lattices/default.yaml');
const forbidden = /Forbidden|forbidden/;

let kube: KubeCluster;
before(async () => {
  kube = await startKubeCluster({ rbac: { users: ['platform-admin', 'auditor', 'alice'] } });
  await kube.kubectlOk(['apply', '-f', STUB_CRD]);
  await kube.kubectlOk(['wait', '--for=condition=Established', 'crd/compositecontrollers.metacontroller.k8s.io', '--timeout=120s']);
  await kube.kubectlOk(['apply', '-k', resolve(ROOT, 'manifests')]);
  await kube.kubectlOk(['wait', '--for=condition=Established', `crd/${CRD_NAME}`, `crd/${LATTICE_CRD_NAME}`, '--timeout=120s']);
  // A tenant: admin of its own namespace, which is as much as a namespace gives.
  await kube.kubectlOk(['create', 'namespace', 'team-a']);
  await kube.kubectlOk(['create', 'rolebinding', 'alice-admin', '--clusterrole=admin', '--user=alice', '--namespace', 'team-a']);
  const env = { KUBECONFIG: kube.kubeconfig, PATH: `${dirname(process.env['KUBECTL_BIN']!)}:${process.env['PATH']}` };
  const { code, output } = await runBlock(markedBlock('docs/lattice.md', 'lattice-access'), { cwd: ROOT, env }).done;
  assert.equal(code, 0, output);
  await until(
    async () => {
      const view = JSON.parse(await kube.kubectlOk(['get', 'clusterrole', 'view', '-o', 'json'])) as { rules?: { resources?: string[] }[] };
      return view.rules?.some((r) => r.resources?.includes(LATTICE_PLURAL));
    },
    { what: 'the view role includes wasmcloudlattices', timeoutMs: 60_000 },
  );
});
after(() => kube?.stop());

const as = (user: string, args: string[]) => kube.kubectl(['--user', user, ...args]);

describe('docs/lattice.md, Who may read and declare lattices, with RBAC on', () => {
  it('lets the platform team declare, change and delete lattices', async () => {
    // As examples/README.md has it: kubectl apply -k examples/lattices/
    assert.equal((await as('platform-admin', ['apply', '-k', resolve(ROOT, 'examples/lattices')])).code, 0);
    assert.equal((await as('platform-admin', ['patch', 'wclattice', 'default', '--type=merge', '-p', '{"spec":{"minHosts":3}}'])).code, 0);
    assert.match((await as('platform-admin', ['get', 'wasmcloudlattices'])).stdout, /^default /m);
  });

  it('lets whoever holds view cluster-wide read them, and nothing more', async () => {
    assert.match((await as('auditor', ['get', 'wasmcloudlattices'])).stdout, /^default /m);
    assert.equal((await as('auditor', ['get', 'wclattice', 'default', '-o', 'yaml'])).code, 0);
    for (const args of [
      ['delete', 'wclattice', 'default'],
      ['patch', 'wclattice', 'default', '--type=merge', '-p', '{"spec":{"minHosts":1}}'],
    ]) {
      const run = await as('auditor', args);
      assert.notEqual(run.code, 0, args.join(' '));
      assert.match(run.stderr, forbidden, args.join(' '));
    }
  });

  it('refuses a tenant, admin of its namespace, to read or declare any lattice', async () => {
    for (const args of [
      ['get', 'wasmcloudlattices'],
      ['get', 'wclattice', 'default'],
      ['apply', '-f', LATTICE],
    ]) {
      const run = await as('alice', args);
      assert.notEqual(run.code, 0, args.join(' '));
      assert.match(run.stderr, forbidden, args.join(' '));
    }
    assert.equal((await as('alice', ['--namespace', 'team-a', 'get', 'wcapp'])).code, 0, 'her applications she reads');
  });

  it("lets no user write a status: that is Metacontroller's", async () => {
    const run = await as('platform-admin', [
      'patch',
      'wclattice',
      'default',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"hostCount":99}}',
    ]);
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, forbidden);
  });
});
