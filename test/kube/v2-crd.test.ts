// `convert --to v2` output judged by a real kube-apiserver (scripts/test-deps.sh builds it): the test
// installs CRDs generated from our v2 schemas (src/schema/v2-crd.ts), then every golden output of
// test/fixtures/v2/ and the conversions of a fixed sample of the property test's applications pass
// `kubectl apply --dry-run=server` with nothing pruned, and the API server refuses what our own check
// refuses (the hostInterfaces CEL rules, the allowedHosts pattern, required and unknown fields).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import yaml from 'js-yaml';
import { v2Problems } from '../../src/convert/check.js';
import { convertToV2 } from '../../src/convert/to-v2.js';
import { validateParent } from '../../src/core/validate.js';
import { V2_GROUP, type HostInterface, type WorkloadDeployment } from '../../src/schema/v2.js';
import { renderV2CrdsYaml, WORKLOAD_DEPLOYMENT_PLURAL } from '../../src/schema/v2-crd.js';
import { startKubeCluster, type KubeCluster, type KubectlResult } from '../support/kube/cluster.js';
import { applyCrds, crdConditions } from '../support/kube/crd.js';
import { wasmApp } from '../support/resources.js';
import { applications, specOfApplication } from '../support/v2-applications.js';

const GOLDEN = resolve(import.meta.dirname, '../fixtures/v2');
const CRD_NAME = `${WORKLOAD_DEPLOYMENT_PLURAL}.${V2_GROUP}`;
/** The namespace the flagged golden output and some generated conversions name (`--namespace apps`). */
const NAMESPACE = 'apps';
const SAMPLE = { seed: 20261201, numRuns: 60 };
let kube: KubeCluster;
let installWarnings: string;

before(async () => {
  kube = await startKubeCluster();
  installWarnings = await applyCrds(kube, renderV2CrdsYaml(), [CRD_NAME]);
  await kube.kubectlOk(['create', 'namespace', NAMESPACE]);
});
after(() => kube?.stop());

/** The documents of every golden output, by file name. */
function goldenOutputs(): Map<string, WorkloadDeployment[]> {
  const files = readdirSync(GOLDEN)
    .filter((f) => f.endsWith('.yaml'))
    .sort();
  return new Map(
    files.map((file) => [
      file,
      (yaml.loadAll(readFileSync(join(GOLDEN, file), 'utf8')) as WorkloadDeployment[]).filter((doc) => doc !== null),
    ]),
  );
}

/** A fresh copy of the golden hello.yaml deployment, to break. */
function hello(): WorkloadDeployment {
  return yaml.load(readFileSync(join(GOLDEN, 'hello.yaml'), 'utf8')) as WorkloadDeployment;
}

/** hello.yaml's deployment with other hostInterfaces. */
function helloWith(hostInterfaces: HostInterface[]): WorkloadDeployment {
  const doc = hello();
  doc.spec.template.spec.hostInterfaces = hostInterfaces;
  return doc;
}

const http = (interfaces: string[], name?: string): HostInterface => ({
  ...(name ? { name } : {}),
  namespace: 'wasi',
  package: 'http',
  interfaces,
});

function dryRun(doc: unknown): Promise<KubectlResult> {
  return kube.kubectl(['apply', '--dry-run=server', '-f', '-'], { input: JSON.stringify(doc) });
}

/** What the server answered for a `-o json` apply: one object, or a List of several. */
function objectsOf(stdout: string): WorkloadDeployment[] {
  const answer = JSON.parse(stdout);
  return answer.kind === 'List' ? answer.items : [answer];
}

describe('convert --to v2 output on a real API server, with CRDs generated from src/schema/v2.ts', () => {
  it('installs the generated CRD without warnings (the CEL rules fit the cost budget)', async () => {
    assert.equal(installWarnings, '');
    const conditions = await crdConditions(kube, CRD_NAME);
    assert.equal(conditions['Established'], 'True');
    assert.equal(conditions['NamesAccepted'], 'True');
  });

  it('accepts every golden output with `kubectl apply --dry-run=server`, keeping every field', async () => {
    const outputs = goldenOutputs();
    const empty = [...outputs].filter(([, docs]) => docs.length === 0).map(([file]) => file);
    assert.deepEqual(empty, ['shared-http.yaml'], 'only the providers-only shared application converts to nothing');
    let accepted = 0;
    for (const [file, docs] of outputs) {
      if (docs.length === 0) continue;
      const run = await kube.kubectl(['apply', '--dry-run=server', '-o', 'json', '-f', join(GOLDEN, file)]);
      assert.equal(run.code, 0, `${file}: ${run.stderr}`);
      assert.equal(run.stderr, '', `${file}: no warnings`);
      const served = objectsOf(run.stdout);
      assert.deepEqual(
        served.map((o) => o.spec),
        docs.map((d) => d.spec),
        `${file}: the server pruned or defaulted nothing`,
      );
      assert.deepEqual(
        served.map((o) => o.metadata.namespace),
        docs.map((d) => d.metadata.namespace ?? 'default'),
        file,
      );
      accepted += served.length;
    }
    assert.equal(accepted, 9, 'every WorkloadDeployment of the seven golden outputs that have one');
  });

  it("accepts the conversions of a sample of the property test's generated applications, keeping every field", async () => {
    const resources = fc.sample(applications, SAMPLE).flatMap((application) => {
      const validation = validateParent(
        wasmApp.scratch().named(application.name).with(specOfApplication(application)).build() as never,
        'default',
      );
      return validation.ok ? convertToV2(validation.app, application.options).resources : [];
    });
    // The sample reaches shapes the golden outputs do not: secrets, host selectors, many packages in one workload, allowedHosts, buckets.
    const specs = resources.map((r) => r.spec.template.spec);
    const entries = specs.flatMap((spec) => spec.hostInterfaces ?? []);
    assert.ok(resources.length >= 30, `${resources.length} resources`);
    assert.ok(
      entries.some((h) => h.secretFrom !== undefined) && entries.some((h) => h.configFrom !== undefined),
      'secretFrom and configFrom',
    );
    assert.ok(
      specs.some((spec) => (spec.hostInterfaces ?? []).length >= 4),
      'four or more host interfaces',
    );
    assert.ok(
      specs.some((spec) => spec.hostSelector !== undefined) && specs.some((spec) => spec.hostSelector?.['hostgroup'] !== undefined),
      'a host selector, and one on hostgroup',
    );
    assert.ok(
      entries.some((h) => h.package === 'blobstore' && h.config?.['buckets'] !== undefined),
      'blobstore buckets',
    );
    assert.ok(
      specs.some((spec) => spec.components.some((c) => c.localResources?.allowedHosts !== undefined)),
      'allowedHosts',
    );
    assert.ok(
      resources.some((r) => r.metadata.namespace === NAMESPACE),
      'a namespace',
    );
    const list = { apiVersion: 'v1', kind: 'List', items: resources };
    const run = await kube.kubectl(['apply', '--dry-run=server', '-o', 'json', '-f', '-'], { input: JSON.stringify(list) });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(
      objectsOf(run.stdout).map((o) => o.spec),
      resources.map((r) => r.spec),
      'the server pruned or defaulted nothing',
    );
  });

  it('judges allowedHosts by the same pattern as our check (RE2 on the server, ECMAScript in Ajv)', async () => {
    const allowing = (allowedHosts: string[]): WorkloadDeployment => {
      const doc = hello();
      doc.spec.template.spec.components[0]!.localResources = { allowedHosts };
      return doc;
    };
    const good = allowing(['*', 'api.example.com:8443', 'https://*.example.org', 'http://10.0.0.1:80/']);
    assert.deepEqual(v2Problems([good]), []);
    const accepted = await dryRun(good);
    assert.equal(accepted.code, 0, accepted.stderr);
    for (const bad of ['https://api.example.com/v1', '*example.com', 'api.example.com?x=1']) {
      assert.notDeepEqual(v2Problems([allowing([bad])]), [], bad);
      const run = await dryRun(allowing([bad]));
      assert.notEqual(run.code, 0, bad);
      assert.ok(
        run.stderr.includes(
          `allowedHosts[0]: Invalid value: "${bad}": spec.template.spec.components[0].localResources.allowedHosts[0] in body should match`,
        ),
        run.stderr,
      );
    }
  });

  it('refuses two unnamed wasi:http entries, as our check does, and accepts them once one is named', async () => {
    // Interfaces are not part of an entry's identity: two unnamed entries of one package are also alike.
    const split = helloWith([http(['incoming-handler']), http(['outgoing-handler'])]);
    assert.deepEqual(v2Problems([split]), [
      'resources[0].spec.template.spec.hostInterfaces[1]: duplicates an earlier entry of wasi:http',
      'resources[0].spec.template.spec.hostInterfaces[1]: a second unnamed entry of wasi:http; merge them or name one',
    ]);
    const run = await dryRun(split);
    assert.notEqual(run.code, 0);
    // Kubernetes 1.33 puts the refused value's type (`"array": `) before the rule's message.
    assert.match(
      run.stderr,
      /spec\.template\.spec\.hostInterfaces: Invalid value: (?:"array": )?at most one unnamed entry per namespace:package; merge them or name one/,
    );
    assert.match(
      run.stderr,
      /spec\.template\.spec\.hostInterfaces: Invalid value: (?:"array": )?two entries with the same namespace, package, name and version/,
    );

    const named = helloWith([http(['incoming-handler']), http(['outgoing-handler'], 'egress')]);
    assert.deepEqual(v2Problems([named]), []);
    const accepted = await dryRun(named);
    assert.equal(accepted.code, 0, accepted.stderr);
  });

  it('refuses two entries alike in namespace, package, name and version, as our check does', async () => {
    const twice = helloWith([http(['incoming-handler'], 'api'), http(['outgoing-handler'], 'api')]);
    assert.deepEqual(v2Problems([twice]), ['resources[0].spec.template.spec.hostInterfaces[1]: duplicates an earlier entry of wasi:http']);
    const run = await dryRun(twice);
    assert.notEqual(run.code, 0);
    assert.match(
      run.stderr,
      /spec\.template\.spec\.hostInterfaces: Invalid value: (?:"array": )?two entries with the same namespace, package, name and version/,
    );
    assert.doesNotMatch(run.stderr, /unnamed/);
  });

  it('refuses a workload without components and a field no v2 CRD has, as our check does', async () => {
    const empty = hello() as { spec: { template: { spec: Record<string, unknown> } } };
    delete empty.spec.template.spec['components'];
    assert.match(v2Problems([empty]).join('\n'), /components/);
    const missing = await dryRun(empty);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /spec\.template\.spec\.components: Required value/);

    const linked = hello() as { spec: { template: { spec: Record<string, unknown> } } };
    linked.spec.template.spec['links'] = [{ target: 'http-component' }];
    assert.notDeepEqual(v2Problems([linked]), []);
    const unknown = await dryRun(linked);
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /unknown field "spec\.template\.spec\.links"/);
  });

  it('scales through /scale and prints the REPLICAS and READY columns', async () => {
    await kube.kubectlOk(['apply', '-f', join(GOLDEN, 'hello.yaml')]);
    await kube.kubectlOk(['scale', 'workloaddeployment/hello-world', '--replicas=3']);
    const live = JSON.parse(await kube.kubectlOk(['get', 'workloaddeployment', 'hello-world', '-o', 'json']));
    assert.equal(live.spec.replicas, 3);
    // What the runtime-operator would write; /scale reads its replicas and selector from it.
    const status = { currentReplicas: 2, selector: 'app=hello-world', conditions: [{ type: 'Ready', status: 'True' }] };
    const path = `/apis/${V2_GROUP}/v1alpha1/namespaces/default/${WORKLOAD_DEPLOYMENT_PLURAL}/hello-world/status`;
    const written = await kube.client.request('PUT', path, { ...live, status });
    assert.equal(written.status, 200, JSON.stringify(written.body));
    const scale = JSON.parse(await kube.kubectlOk(['get', 'workloaddeployment', 'hello-world', '--subresource=scale', '-o', 'json']));
    assert.deepEqual(
      { spec: scale.spec, status: scale.status },
      { spec: { replicas: 3 }, status: { replicas: 2, selector: 'app=hello-world' } },
    );
    const [header, row] = (await kube.kubectlOk(['get', 'workloaddeployments']))
      .trim()
      .split('\n')
      .map((line) => line.trim().split(/\s{2,}/));
    assert.deepEqual(header, ['NAME', 'REPLICAS', 'READY'], 'the columns declared, no AGE (as upstream)');
    assert.deepEqual(row, ['hello-world', '3', 'True']);
    await kube.kubectlOk(['delete', 'workloaddeployment', 'hello-world', '--wait=true']);
  });
});
