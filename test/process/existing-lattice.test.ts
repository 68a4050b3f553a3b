// Connecting to a lattice you already run (docs/install.md, "Connect to your lattice"): the five
// settings, given once (the chart's values, or lattice.yaml read by the kustomize component
// manifests/components/existing-lattice), land in every object that reads them, the same from both
// install paths: NATS_URL and DEFAULT_LATTICE in the ConfigMap, the policy where
// LATTICE_POLICY_FILE points, the NATS and Metacontroller namespaces in the NetworkPolicy.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import yaml from 'js-yaml';
import { parsePolicy } from '../../src/core/tenancy.js';
import { kustomize, renderChart, type Obj } from '../support/helm.js';
import { connectionOf, EXAMPLE, exampleLattice, renderOverlay, type Connection } from '../support/lattice-connection.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** Settings other than every default, for both install paths. */
const OTHER = {
  natsUrl: 'tls://nats-0.messaging.svc:4443,tls://nats-1.messaging.svc:4443',
  defaultLattice: 'prod',
  rules: [
    { namespaces: ['*'], lattices: ['prod'] },
    { namespaces: ['team-*'], lattices: ['{namespace}', 'shared'] },
  ],
  metacontrollerNamespace: 'metacontroller-system',
  natsNamespace: 'messaging',
  podLabels: { 'app.kubernetes.io/name': 'nats', 'app.kubernetes.io/instance': 'lattice' },
  port: 4443,
};

function withOther(lattice: Obj): void {
  lattice['config'] = { natsUrl: OTHER.natsUrl, defaultLattice: OTHER.defaultLattice };
  lattice['latticePolicy'] = yaml.dump({ rules: OTHER.rules });
  lattice['networkPolicy'] = {
    metacontrollerNamespace: OTHER.metacontrollerNamespace,
    nats: { namespace: OTHER.natsNamespace, podLabels: OTHER.podLabels, port: OTHER.port },
  };
}

/** The chart with OTHER as values (everyNamespace for the rule of every namespace), and more flags. */
function chartWithOther(...more: string[]): Obj[] {
  const dir = mkdtempSync(join(tmpdir(), 'existing-lattice-values-'));
  try {
    const values = {
      config: { natsUrl: OTHER.natsUrl, defaultLattice: OTHER.defaultLattice },
      latticePolicy: { everyNamespace: OTHER.rules[0]!.lattices, rules: OTHER.rules.slice(1) },
      networkPolicy: {
        metacontrollerNamespace: OTHER.metacontrollerNamespace,
        nats: { namespace: OTHER.natsNamespace, podLabels: OTHER.podLabels, port: OTHER.port },
      },
    };
    writeFileSync(join(dir, 'values.yaml'), yaml.dump(values));
    return renderChart('--values', join(dir, 'values.yaml'), ...more);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What OTHER reads as, with the NATS peers given. */
const expectedOther = (to: Obj[]): Connection => ({
  natsUrl: OTHER.natsUrl,
  defaultLattice: OTHER.defaultLattice,
  policy: { rules: OTHER.rules },
  metacontrollerNamespace: OTHER.metacontrollerNamespace,
  nats: { to, ports: [{ port: OTHER.port, protocol: 'TCP' }] },
});
const NATS_PODS = [
  {
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': OTHER.natsNamespace } },
    podSelector: { matchLabels: OTHER.podLabels },
  },
];

describe('connecting to an existing lattice', () => {
  it("examples/existing-lattice: lattice.yaml and values.yaml hold the same settings, and each install path puts them where they're read", () => {
    const lattice = exampleLattice();
    const { nats } = lattice['networkPolicy'];
    const fromKustomize = connectionOf(kustomize(EXAMPLE));
    assert.deepEqual(fromKustomize, {
      natsUrl: lattice['config'].natsUrl,
      defaultLattice: lattice['config'].defaultLattice,
      policy: parsePolicy(lattice['latticePolicy']),
      metacontrollerNamespace: lattice['networkPolicy'].metacontrollerNamespace,
      nats: {
        to: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': nats.namespace } },
            podSelector: { matchLabels: nats.podLabels },
          },
        ],
        ports: [{ port: nats.port, protocol: 'TCP' }],
      },
    });
    assert.deepEqual(connectionOf(renderChart('--values', resolve(ROOT, EXAMPLE, 'values.yaml'))), fromKustomize);
  });

  it('puts settings other than the defaults in every object, the same from lattice.yaml and from the chart', () => {
    const objects = renderOverlay(withOther);
    assert.deepEqual(connectionOf(objects), expectedOther(NATS_PODS));
    assert.deepEqual(connectionOf(chartWithOther()), expectedOther(NATS_PODS));
    assert.ok(!objects.some((o) => o['kind'] === 'LatticeConnection'), 'lattice.yaml is not sent to the cluster');
  });

  it("rolls the pods when lattice.yaml changes: the ConfigMap's name follows its content, and the Deployment the name", () => {
    const configMapName = (objects: Obj[]) =>
      objects.find((o) => o['kind'] === 'ConfigMap' && /^wasmcloud-metacontroller-[a-z0-9]{10}$/.test(o['metadata'].name))!['metadata']
        .name;
    const before = renderOverlay(() => {});
    const after = renderOverlay((lattice) => (lattice['config'].natsUrl = 'nats://nats.elsewhere.svc:4222'));
    assert.notEqual(configMapName(after), configMapName(before));
    assert.equal(connectionOf(after).natsUrl, 'nats://nats.elsewhere.svc:4222', 'and the Deployment reads the new one');
  });

  it("for a NATS outside the cluster, the docs' patch allows its addresses on lattice.yaml's port, as the chart's ipBlocks do", () => {
    const page = readFileSync(resolve(ROOT, 'docs/install.md'), 'utf8');
    const start = page.indexOf('## Connect to your lattice');
    const patch = page
      .slice(start, page.indexOf('\n## ', start + 1))
      .split('```yaml\n')[1]!
      .split('```')[0]!;
    const cidr = /cidr: (\S+)/.exec(patch)![1]!;
    const outside = [{ ipBlock: { cidr } }];
    assert.deepEqual(connectionOf(renderOverlay(withOther, patch)), expectedOther(outside));
    assert.deepEqual(connectionOf(chartWithOther('--set', `networkPolicy.nats.ipBlocks={${cidr}}`)), expectedOther(outside));
  });

  it('fails to build when lattice.yaml lacks a setting, naming it', () => {
    assert.throws(() => renderOverlay((lattice) => delete lattice['networkPolicy'].nats.port), /networkPolicy\.nats\.port/);
  });
});
