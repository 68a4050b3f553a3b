// The WasmCloudLattice CRD judged by a real kube-apiserver: it installs cluster-scoped and becomes
// Established, an empty lattice applies, `kubectl explain` shows the descriptions of
// src/schema/lattice.ts, every status the core writes is stored unpruned through the status
// subresource, and `kubectl get wasmcloudlattices` prints HOSTS, APPS, READY and AGE.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GROUP, VERSION } from '../../src/schema/crd.js';
import { LATTICE_PLURAL } from '../../src/schema/lattice-crd.js';
import { decideLattice, latticeTargetOf, type WadmView } from '../../src/core/lattice.js';
import type { HostFacts, HostsView } from '../../src/core/lattice-hosts.js';
import { LATTICE_REASONS } from '../../src/core/lattice-reasons.js';
import { startKubeCluster, type KubeCluster } from '../support/kube/cluster.js';
import { crdConditions, installLatticeCrd, LATTICE_CRD_NAME } from '../support/kube/crd.js';

const COLLECTION = `/apis/${GROUP}/${VERSION}/${LATTICE_PLURAL}`;
let kube: KubeCluster;
let installWarnings: string;

before(async () => {
  kube = await startKubeCluster();
  installWarnings = await installLatticeCrd(kube);
});
after(() => kube?.stop());

const lattice = (name: string, spec?: Record<string, unknown>) =>
  JSON.stringify({ apiVersion: `${GROUP}/${VERSION}`, kind: 'WasmCloudLattice', metadata: { name }, ...(spec ? { spec } : {}) });

const NOW = Date.parse('2026-03-01T12:00:00Z');
const host = (n: number, labels: Record<string, string>): HostFacts => ({
  id: `N${String(n).padStart(55, 'B')}`,
  friendlyName: `sim-host-${n}`,
  labels,
  labelsOmitted: 0,
  version: '1.9.2',
  uptimeSeconds: 65,
  sentAt: '2026-03-01T11:59:50Z',
  heardAt: NOW - 10_000,
  periodMs: 30_000,
  components: 1,
  providers: 1,
  applications: ['hello-world'],
});
const heard: Extract<HostsView, { watching: true }> = {
  watching: true,
  since: NOW - 600_000,
  hosts: [host(1, { zone: 'eu' }), host(2, { zone: 'us' })],
  untracked: false,
  defaultPeriodMs: 30_000,
};
const listed: WadmView = {
  kind: 'listed',
  total: 2,
  models: [
    { name: 'hello-world', version: 'sha-1', deployed: 'sha-1', status: 'deployed' },
    { name: 'washed', version: 'v1', deployed: null, status: 'undeployed', message: 'Manifest has been undeployed' },
  ],
  owners: new Map([
    ['hello-world', 'team-a/hello-world'],
    ['washed', null],
  ]),
};

/** A status of each reason the lattice catalogue has, as the core builds it. */
function statusesOfEveryReason() {
  const call = (spec: unknown) => ({
    target: latticeTargetOf('default', spec),
    generation: 1,
    namespaces: ['*'],
    previousStatus: undefined,
    now: NOW,
  });
  const unavailable: WadmView = { kind: 'unavailable', reason: 'NoResponders', message: 'no wadm' };
  const refused: HostsView = { watching: false, why: 'refused', message: 'refused' };
  return [
    decideLattice(call({}), heard, listed),
    decideLattice(call({ minHosts: 3 }), { ...heard, since: NOW - 1000 }, listed),
    decideLattice(call({ minHosts: 3 }), heard, listed),
    decideLattice(call({}), heard, unavailable),
    decideLattice(call({}), refused, listed),
    decideLattice(call({ lattice: 'a.b' }), heard, listed),
  ].map((answer) => answer.status);
}

describe('the WasmCloudLattice CRD on a real API server', () => {
  it('installs cluster-scoped without warnings and becomes Established', async () => {
    assert.equal(installWarnings, '');
    const conditions = await crdConditions(kube, LATTICE_CRD_NAME);
    assert.equal(conditions['Established'], 'True');
    assert.equal(conditions['NamesAccepted'], 'True');
    const crd = JSON.parse(await kube.kubectlOk(['get', 'crd', LATTICE_CRD_NAME, '-o', 'json']));
    assert.equal(crd.spec.scope, 'Cluster');
  });

  it('takes a lattice without a spec, with an empty one, and one naming its lattice; refuses a dotted name and unknown fields', async () => {
    await kube.kubectlOk(['apply', '-f', '-'], { input: lattice('bare') });
    await kube.kubectlOk(['apply', '-f', '-'], { input: lattice('empty', {}) });
    await kube.kubectlOk(['apply', '-f', '-'], {
      input: lattice('prod-eu', { lattice: 'Prod_EU', minHosts: 2, requiredHosts: [{ labels: { zone: 'eu' } }] }),
    });
    const dotted = await kube.kubectl(['apply', '-f', '-'], { input: lattice('a.b') });
    assert.notEqual(dotted.code, 0);
    assert.match(dotted.stderr, /metadata\.name: Invalid value: "a\.b"/);
    const unknown = await kube.kubectl(['apply', '--validate=strict', '-f', '-'], { input: lattice('typo', { minhosts: 2 }) });
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /unknown field "spec\.minhosts"/);
    const badId = await kube.kubectl(['apply', '-f', '-'], { input: lattice('bad-id', { lattice: 'a.b' }) });
    assert.match(badId.stderr, /spec\.lattice: Invalid value: "a\.b"/);
    await kube.kubectlOk(['delete', 'wasmcloudlattices', 'bare', 'empty', 'prod-eu']);
  });

  it('explains the fields with the descriptions of src/schema/lattice.ts', async () => {
    const spec = await kube.kubectlOk(['explain', 'wasmcloudlattices.spec']);
    assert.match(spec, /Which lattice this is, and what Ready means for it\. Every field is optional\./);
    assert.match(spec, /minHosts\s+<integer>/);
    const hosts = await kube.kubectlOk(['explain', 'wclattice.status.hosts']);
    assert.match(hosts, /One host heartbeating in the lattice\./);
    assert.match(hosts, /lastHeartbeat\s+<string> -required-/);
    const owner = await kube.kubectlOk(['explain', 'wclattice.status.applications.owner']);
    assert.match(owner, /core\.wasmcloud\.com\/owner annotation of the deployed version/);
  });

  it('stores the status of every lattice reason, unpruned, through the status subresource', async () => {
    await kube.kubectlOk(['apply', '-f', '-'], { input: lattice('default') });
    const written = new Set<string>();
    for (const status of statusesOfEveryReason()) {
      const live = (await kube.client.request('GET', `${COLLECTION}/default`)).body;
      const res = await kube.client.request('PUT', `${COLLECTION}/default/status`, { ...live, status });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.status, status, 'the server kept every field');
      written.add(status.conditions![0]!.reason);
    }
    assert.deepEqual([...written].sort(), Object.keys(LATTICE_REASONS).sort());
  });

  it('prints HOSTS, APPS, READY and AGE for `kubectl get wasmcloudlattices`, and more with -o wide', async () => {
    const [status] = statusesOfEveryReason();
    const live = (await kube.client.request('GET', `${COLLECTION}/default`)).body;
    assert.equal((await kube.client.request('PUT', `${COLLECTION}/default/status`, { ...live, status })).status, 200);
    const [header, row] = (await kube.kubectlOk(['get', 'wasmcloudlattices']))
      .trim()
      .split('\n')
      .map((line) => line.trim().split(/\s{2,}/));
    assert.deepEqual(header, ['NAME', 'HOSTS', 'APPS', 'READY', 'AGE']);
    assert.deepEqual(row!.slice(0, 4), ['default', '2', '2', 'True']);
    const wide = await kube.kubectlOk(['get', 'wclattice', 'default', '-o', 'wide']);
    assert.match(wide.split('\n')[0]!, /LATTICE\s+WADM\s+STATUS$/);
    assert.match(wide.split('\n')[1]!, /default\s+true\s+2 hosts heartbeating, 2 applications; wadm answers$/);
  });
});
