// The Helm chart, with the real helm from scripts/test-deps.sh: lint, render with the defaults and
// with every option, and parity with manifests/: the chart's defaults install the same objects as
// `kubectl kustomize manifests/` (and its options the same as examples/secure-install and
// manifests/monitoring), so the two ways to install cannot drift apart.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import yaml from 'js-yaml';
import { loadConfig, VARIABLES } from '../../src/plumbing/config.js';
import { parsePolicy } from '../../src/core/tenancy.js';
import { ALL_OPTIONS, CHART, helm, kustomize, NAMESPACE, renderChart, type Obj } from '../support/helm.js';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(resolve(ROOT, path), 'utf8');
const VERSION = (JSON.parse(read('package.json')) as { version: string }).version;

const key = (o: Obj) => `${o['kind']}/${o['metadata'].namespace ?? ''}/${withoutHash(o['metadata'].name)}`;
// kustomize's generated ConfigMap carries a hash of its content in its name; the chart rolls the
// pods with a checksum annotation instead.
const withoutHash = (name: string) => name.replace(/^(wasmcloud-metacontroller)-[a-z0-9]{10}$/, '$1');

function isSubset(small: Obj | undefined, big: Obj | undefined, what: string): void {
  for (const [k, v] of Object.entries(small ?? {})) assert.equal(big?.[k], v, `${what}: ${k}`);
}

/** Everything but labels and pod template metadata must be equal; those the chart may extend
 *  (Helm's own labels, a config checksum) but must keep manifests/'s. */
function assertSameObject(fromKustomize: Obj, fromChart: Obj): void {
  const what = key(fromKustomize);
  isSubset(fromKustomize['metadata'].labels, fromChart['metadata'].labels, `${what} labels`);
  isSubset(fromKustomize['metadata'].annotations, fromChart['metadata'].annotations, `${what} annotations`);
  const template = fromKustomize['spec']?.template?.metadata;
  if (template) {
    isSubset(template.labels, fromChart['spec'].template.metadata.labels, `${what} pod labels`);
    isSubset(template.annotations, fromChart['spec'].template.metadata.annotations, `${what} pod annotations`);
  }
  const comparable = (o: Obj) => {
    const copy = JSON.parse(JSON.stringify(o).replaceAll(/"wasmcloud-metacontroller-[a-z0-9]{10}"/g, '"wasmcloud-metacontroller"')) as Obj;
    copy['metadata'] = { name: copy['metadata'].name, namespace: copy['metadata'].namespace };
    if (copy['spec']?.template?.metadata) delete copy['spec'].template.metadata;
    // Volumes and mounts are maps keyed by name to Kubernetes; kustomize puts patched ones first.
    const pod = copy['spec']?.template?.spec;
    const byName = (list: Obj[] | undefined) => list?.sort((a, b) => String(a['name']).localeCompare(String(b['name'])));
    if (pod) {
      byName(pod.volumes);
      for (const c of pod.containers as Obj[]) byName(c['volumeMounts']);
    }
    return copy;
  };
  assert.deepEqual(comparable(fromChart), comparable(fromKustomize), what);
}

function assertSameObjects(fromKustomize: Obj[], fromChart: Obj[]): void {
  assert.deepEqual(fromChart.map(key).sort(), fromKustomize.map(key).sort());
  for (const o of fromKustomize)
    assertSameObject(
      o,
      fromChart.find((c) => key(c) === key(o))!,
    );
}

describe('charts/wasmcloud-metacontroller', () => {
  it('is versioned with package.json, chart and app alike', () => {
    const chart = yaml.load(read('charts/wasmcloud-metacontroller/Chart.yaml')) as Obj;
    assert.equal(chart['version'], VERSION);
    assert.equal(chart['appVersion'], VERSION);
  });

  it('ships manifests/crd.yaml, manifests/lattice-crd.yaml and the files of manifests/monitoring unchanged', () => {
    assert.equal(read('charts/wasmcloud-metacontroller/files/crd.yaml'), read('manifests/crd.yaml'));
    assert.equal(read('charts/wasmcloud-metacontroller/files/lattice-crd.yaml'), read('manifests/lattice-crd.yaml'));
    assert.equal(read('charts/wasmcloud-metacontroller/files/prometheusrule.yaml'), read('manifests/monitoring/prometheusrule.yaml'));
    assert.equal(read('charts/wasmcloud-metacontroller/files/grafana-dashboard.json'), read('manifests/monitoring/grafana-dashboard.json'));
  });

  it('has every value documented in the Helm section of docs/install.md', () => {
    const page = read('docs/install.md');
    const start = page.indexOf('## With Helm');
    const section = page.slice(start, page.indexOf('\n## ', start + 1));
    const values = yaml.load(read('charts/wasmcloud-metacontroller/values.yaml')) as Obj;
    // Maps passed through as they are (Kubernetes fields, variables) count as one value.
    const freeForm = new Set(['resources', 'extra', 'podLabels', 'labels', 'nodeSelector', 'affinity']);
    const leaves = (o: Obj, prefix: string): string[] =>
      Object.entries(o).flatMap(([k, v]) =>
        v && typeof v === 'object' && !Array.isArray(v) && !freeForm.has(k) ? leaves(v, `${prefix}${k}.`) : [`${prefix}${k}`],
      );
    for (const path of leaves(values, '')) {
      const parent = path.split('.').slice(0, -1).join('.');
      const leaf = path.split('.').at(-1)!;
      // A row names a value by its full path, or after a sibling's full path as `.leaf`, or as `parent.*`.
      const mentioned =
        section.includes(`\`${path}\``) ||
        (parent !== '' && section.includes(`\`${parent}.`) && section.includes(`\`.${leaf}\``)) ||
        section.includes(`\`${parent}.*\``);
      assert.ok(mentioned, `${path} is not in docs/install.md "With Helm"`);
    }
  });

  it('passes helm lint --strict, with the defaults and with every option', () => {
    assert.match(helm('lint', '--strict', CHART), /1 chart\(s\) linted, 0 chart\(s\) failed/);
    assert.match(helm('lint', '--strict', CHART, '--values', ALL_OPTIONS), /1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  it('with the defaults, installs what kubectl kustomize manifests/ does, but the namespace Helm creates', () => {
    const fromKustomize = kustomize('manifests');
    assertSameObjects(
      fromKustomize.filter((o) => o['kind'] !== 'Namespace'),
      renderChart(),
    );
  });

  it('with namespace.create, also the namespace with Pod Security restricted enforced', () => {
    assertSameObjects(kustomize('manifests'), renderChart('--set', 'namespace.create=true'));
  });

  it('with hooks.secure.enabled, installs what kubectl kustomize examples/secure-install does', () => {
    const fromKustomize = kustomize('examples/secure-install').filter((o) => o['kind'] !== 'Namespace');
    assertSameObjects(fromKustomize, renderChart('--set', 'hooks.secure.enabled=true'));
  });

  it('with the monitoring values, adds what kubectl kustomize manifests/monitoring does', () => {
    const fromKustomize = [...kustomize('manifests'), ...kustomize('manifests/monitoring')].filter((o) => o['kind'] !== 'Namespace');
    const flags = ['podMonitor', 'prometheusRule', 'dashboard'].flatMap((m) => ['--set', `monitoring.${m}.enabled=true`]);
    assertSameObjects(fromKustomize, renderChart(...flags));
  });

  it('with examples/existing-lattice/values.yaml, installs what kubectl kustomize examples/existing-lattice does', () => {
    // The policy file is the same policy, written by Helm's toYaml or by hand.
    const policyParsed = (objects: Obj[]) =>
      objects.map((o) =>
        o['kind'] === 'ConfigMap' && o['metadata'].name === 'wasmcloud-metacontroller-lattice-policy'
          ? { ...o, data: { 'policy.yaml': parsePolicy(o['data']['policy.yaml']) } }
          : o,
      );
    const fromKustomize = kustomize('examples/existing-lattice').filter((o) => o['kind'] !== 'Namespace');
    assertSameObjects(policyParsed(fromKustomize), policyParsed(renderChart('--values', 'examples/existing-lattice/values.yaml')));
  });

  it('with hardened hooks and the monitoring values, installs what kubectl kustomize examples/monitoring does: the PodMonitor scrapes https', () => {
    const fromKustomize = kustomize('examples/monitoring').filter((o) => o['kind'] !== 'Namespace');
    const flags = ['podMonitor', 'prometheusRule', 'dashboard'].flatMap((m) => ['--set', `monitoring.${m}.enabled=true`]);
    const fromChart = renderChart(
      '--set',
      'hooks.secure.enabled=true',
      '--set',
      'monitoring.labels.release=kube-prometheus-stack',
      ...flags,
    );
    assertSameObjects(fromKustomize, fromChart);
    for (const objects of [fromKustomize, fromChart]) {
      const [endpoint] = objects.find((o) => o['kind'] === 'PodMonitor')!['spec'].podMetricsEndpoints as Obj[];
      const certificate = objects.find((o) => o['kind'] === 'Certificate' && o['metadata'].name === 'wasmcloud-metacontroller-tls')!;
      assert.equal(endpoint!['scheme'], 'https');
      assert.deepEqual(endpoint!['tlsConfig'].ca.secret, { name: certificate['spec'].secretName, key: 'ca.crt' });
      assert.ok(certificate['spec'].dnsNames.includes(endpoint!['tlsConfig'].serverName), 'the name the certificate is for');
    }
  });

  it('with every option, renders each value where the service and Kubernetes read it', () => {
    const objects = renderChart('--values', ALL_OPTIONS);
    const values = yaml.load(readFileSync(ALL_OPTIONS, 'utf8')) as Obj;
    const one = (kind: string, name: string) => {
      const found = objects.filter((o) => o['kind'] === kind && o['metadata'].name === name);
      assert.equal(found.length, 1, `${kind}/${name}`);
      return found[0]!;
    };
    const pod = one('Deployment', 'wasmcloud-metacontroller')['spec'];
    const container = pod.template.spec.containers[0] as Obj;
    assert.equal(pod.replicas, 3);
    assert.equal(container['image'], `${values['image'].repository}:${values['image'].tag}@${values['image'].digest}`);
    assert.equal(container['imagePullPolicy'], 'Always');
    assert.deepEqual(container['resources'], values['resources']);
    assert.deepEqual(pod.template.spec.imagePullSecrets, values['imagePullSecrets']);
    assert.deepEqual(pod.template.spec.nodeSelector, values['nodeSelector']);
    assert.deepEqual(pod.template.spec.tolerations, values['tolerations']);
    assert.deepEqual(pod.template.spec.affinity, values['affinity']);

    // The ConfigMap is a configuration the service accepts, pointing at the mounted files.
    const env = one('ConfigMap', 'wasmcloud-metacontroller')['data'] as Record<string, string>;
    const loaded = loadConfig(env);
    assert.ok(loaded.ok, JSON.stringify(loaded));
    assert.equal(String(loaded.config.natsServers), 'tls://nats.example.com:4222');
    const known = new Set(Object.values(VARIABLES).map((v) => v.env));
    for (const name of Object.keys(env)) assert.ok(known.has(name), `${name} is not a variable of src/plumbing/config.ts`);
    assert.equal(loaded.config.defaultLattice, 'production');
    assert.equal(env['LOG_FORMAT'], 'json');
    const mounts = new Map((container['volumeMounts'] as Obj[]).map((m) => [m['name'], m['mountPath']]));
    const volumes = new Map((pod.template.spec.volumes as Obj[]).map((v) => [v['name'], v]));
    assert.equal(env['NATS_CREDS_FILE'], `${mounts.get('nats-secrets')}/nats.creds`);
    assert.equal(env['NATS_TLS_KEY_FILE'], `${mounts.get('nats-secrets')}/tls.key`);
    assert.equal(volumes.get('nats-secrets')!['secret'].secretName, 'nats-client');

    // The lattice policy is a file the service parses, where LATTICE_POLICY_FILE says.
    const policy = one('ConfigMap', 'wasmcloud-metacontroller-lattice-policy')['data']['policy.yaml'] as string;
    const everyNamespace = { namespaces: ['*'], lattices: values['latticePolicy'].everyNamespace };
    assert.deepEqual(parsePolicy(policy), { rules: [everyNamespace, ...values['latticePolicy'].rules] });
    assert.equal(env['LATTICE_POLICY_FILE'], `${mounts.get('lattice-policy')}/policy.yaml`);
    assert.equal(volumes.get('lattice-policy')!['configMap'].name, 'wasmcloud-metacontroller-lattice-policy');

    // Hardened hooks with the named Secrets, on both sides of the call.
    const hooks = one('CompositeController', 'wasmcloudapplication-controller')['spec'];
    assert.equal(hooks.resyncPeriodSeconds, 120);
    for (const hook of ['sync', 'finalize']) {
      const webhook = hooks.hooks[hook].webhook;
      assert.equal(webhook.timeout, '8s');
      assert.equal(env['HOOK_TIMEOUT'], webhook.timeout, 'the service ends every call within the timeout Metacontroller gives it');
      assert.deepEqual([webhook.service.protocol, webhook.service.port], ['https', 443]);
      assert.equal(webhook.authorization.secretRef.name, 'hook-token');
      assert.equal(webhook.caBundle.secretRef.name, 'hook-tls');
    }
    assert.equal(volumes.get('hook-token')!['secret'].secretName, 'hook-token');
    assert.equal(volumes.get('tls')!['secret'].secretName, 'hook-tls');
    assert.equal(one('Certificate', 'wasmcloud-metacontroller-tls')['spec'].secretName, 'hook-tls');
    assert.equal(one('PodMonitor', 'wasmcloud-metacontroller')['spec'].podMetricsEndpoints[0].scheme, 'https');

    const policyObject = one('NetworkPolicy', 'wasmcloud-metacontroller')['spec'];
    assert.deepEqual(policyObject.egress[2], { to: [{ ipBlock: { cidr: '10.20.0.0/16' } }], ports: [{ port: 4443, protocol: 'TCP' }] });
    assert.equal(policyObject.ingress[0].from[0].namespaceSelector.matchLabels['kubernetes.io/metadata.name'], 'metacontroller-system');
    assert.deepEqual(policyObject.ingress[2].from[0].podSelector.matchLabels, { app: 'prometheus' });
    assert.equal(env['PEERS'], `wasmcloud-metacontroller-peers.${NAMESPACE}.svc:8080`);
    assert.equal(one('PodDisruptionBudget', 'wasmcloud-metacontroller')['spec'].minAvailable, 2);
    assert.equal(one('Namespace', NAMESPACE)['metadata'].labels['pod-security.kubernetes.io/enforce'], 'restricted');
    for (const kind of ['PodMonitor', 'PrometheusRule']) {
      const labels = one(kind, 'wasmcloud-metacontroller')['metadata'].labels;
      assert.equal(labels['release'], values['monitoring'].labels.release, `${kind}: monitoring.labels`);
      assert.equal(labels['app.kubernetes.io/name'], 'wasmcloud-metacontroller', `${kind}: its own labels kept`);
    }
    one('ConfigMap', 'wasmcloud-metacontroller-dashboard');
    assert.deepEqual(
      objects.filter((o) => o['kind'] === 'ClusterRole'),
      [],
      'rbac.aggregateRoles: false',
    );
  });

  it('installs and upgrades both CRDs as templates, kept by helm uninstall unless crds.keep=false, none with crds.enabled=false', () => {
    // Not in crds/: Helm installs that directory once and never upgrades it (test/kube/upgrade.test.ts).
    const crds = (objects: Obj[]) => objects.filter((o) => o['kind'] === 'CustomResourceDefinition');
    assert.deepEqual(
      crds(renderChart('--skip-crds')).map((crd) => crd['metadata'].name),
      ['wasmcloudapplications.core.wasmcloud.com', 'wasmcloudlattices.core.wasmcloud.com'],
    );
    for (const crd of crds(renderChart())) assert.deepEqual(crd['metadata'].annotations, { 'helm.sh/resource-policy': 'keep' });
    for (const crd of crds(renderChart('--set', 'crds.keep=false'))) assert.equal(crd['metadata'].annotations, undefined);
    assert.deepEqual(crds(renderChart('--set', 'crds.enabled=false')), []);
  });

  it('rolls the pods when the configuration changes, as the hashed name does in manifests/', () => {
    const checksum = (objects: Obj[]) =>
      objects.find((o) => o['kind'] === 'Deployment')!['spec'].template.metadata.annotations['checksum/config'];
    assert.notEqual(checksum(renderChart()), checksum(renderChart('--set', 'config.logLevel=debug')));
    assert.equal(checksum(renderChart()), checksum(renderChart('--set', 'replicas=3')));
  });
});
