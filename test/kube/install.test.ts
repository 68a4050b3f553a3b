// Installing as docs/install.md says, on a real API server with RBAC on (kube-controller-manager's
// clusterrole-aggregation controller beside it, as in every cluster): the commands of "Connect to
// your lattice" run as shown (the checkout's chart for the registry's), each storing the settings
// of its file where they are read, and rolling the pods on a change; the commands of
// "Access for your users" and the aggregated roles let an `edit` binding create applications and a
// `view` binding only read them; docs/operations.md's examples/monitoring applies. Metacontroller,
// cert-manager and the Prometheus Operator are not running: their kinds are there, open.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { PLURAL } from '../../src/schema/crd.js';
import { CHART, type Obj } from '../support/helm.js';
import { startKubeCluster, type KubeCluster } from '../support/kube/cluster.js';
import { CRD_NAME } from '../support/kube/crd.js';
import { connectionOf, EXAMPLE, renderOverlay } from '../support/lattice-connection.js';
import { until } from '../support/wait.js';

const ROOT = resolve(import.meta.dirname, '../..');
const NAMESPACE = 'wasmcloud-metacontroller';
const STUB_CRDS = ['compositecontroller-crd.yaml', 'monitoring-crds.yaml'].map((f) => resolve(ROOT, 'test/fixtures/kube', f));
const APP = resolve(ROOT, 'examples/apps/hello-world.yaml');

/** The shell commands of a docs page's section that start with `program`, continuation lines joined, as words. */
function commandsOf(page: string, heading: string, program: string): string[][] {
  const text = readFileSync(resolve(ROOT, page), 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `${page}: ${heading}`);
  const section = text.slice(start, text.indexOf('\n## ', start + 1));
  const blocks = section
    .split('```sh\n')
    .slice(1)
    .map((b) => b.split('```')[0]!);
  return blocks
    .flatMap((block) => block.replaceAll('\\\n', ' ').split('\n'))
    .map((line) => line.trim().split(/\s+/))
    .filter((words) => words[0] === program)
    .map((words) => words.slice(1).map((w) => w.replace(/^"(.*)"$/, '$1')));
}

let kube: KubeCluster;
before(async () => {
  kube = await startKubeCluster({ rbac: { users: ['alice', 'bob', 'carol'] } });
  await kube.kubectlOk(['apply', ...STUB_CRDS.flatMap((f) => ['-f', f])]);
  await kube.kubectlOk(['wait', '--for=condition=Established', 'crd', '--all', '--timeout=120s']);
});
after(() => kube?.stop());

/** What the API server holds of an install: the objects connectionOf reads. */
async function installed(): Promise<Obj[]> {
  const list = await kube.kubectlOk(['get', 'deployments,configmaps,networkpolicies', '--namespace', NAMESPACE, '-o', 'json']);
  return (JSON.parse(list) as { items: Obj[] }).items;
}

/** The Deployment's generation: it grows when its pod template changes, which rolls the pods. */
async function generation(): Promise<number> {
  const deployment = await kube.kubectlOk(['get', 'deployment', 'wasmcloud-metacontroller', '-n', NAMESPACE, '-o', 'json']);
  return (JSON.parse(deployment) as Obj)['metadata'].generation as number;
}

describe('docs/install.md, Connect to your lattice, on a real API server', () => {
  it('helm install with values.yaml stores its settings where they are read; helm upgrade with a change rolls the pods', async () => {
    const [install] = commandsOf('docs/install.md', '## Connect to your lattice', 'helm');
    assert.ok(install?.[0] === 'install', 'the section shows a helm install');
    const args = install
      .map((word) => (word.startsWith('oci://') ? CHART : word === 'values.yaml' ? resolve(ROOT, EXAMPLE, 'values.yaml') : word))
      .filter((word, i, words) => word !== '--version' && words[i - 1] !== '--version');
    await kube.helmOk(args);
    try {
      assert.deepEqual(
        connectionOf(await installed()),
        connectionOf(renderOverlay(() => {})),
        'the settings of values.yaml, as lattice.yaml has them',
      );
      const first = await generation();
      const upgrade = ['upgrade', ...args.slice(1).filter((word) => word !== '--create-namespace')];
      await kube.helmOk([...upgrade, '--set', 'config.natsUrl=nats://nats.elsewhere.svc:4222']);
      assert.equal(connectionOf(await installed()).natsUrl, 'nats://nats.elsewhere.svc:4222');
      assert.equal(await generation(), first + 1, 'a new pod template: the pods roll');
    } finally {
      await kube.helmOk(['uninstall', 'wasmcloud-metacontroller', '--namespace', NAMESPACE, '--wait=false']);
    }
  });

  it('kubectl apply -k examples/existing-lattice/ stores the settings of lattice.yaml; applying a change rolls the pods', async () => {
    const [apply] = commandsOf('docs/install.md', '## Connect to your lattice', 'kubectl');
    assert.deepEqual(apply, ['apply', '-k', `${EXAMPLE}/`]);
    await kube.kubectlOk(['apply', '-k', resolve(ROOT, apply[2]!)]);
    assert.deepEqual(connectionOf(await installed()), connectionOf(renderOverlay(() => {})));

    const first = await generation();
    const changed = renderOverlay((lattice) => (lattice['config'].natsUrl = 'nats://nats.elsewhere.svc:4222'));
    await kube.kubectlOk(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: changed }) });
    assert.equal(connectionOf(await installed()).natsUrl, 'nats://nats.elsewhere.svc:4222');
    assert.equal(await generation(), first + 1, 'a new pod template: the pods roll');
  });
});

describe('docs/install.md, Access for your users, with RBAC on', () => {
  const as = (user: string, args: string[], input?: string) =>
    kube.kubectl(['--user', user, '--namespace', 'team-a', ...args], input === undefined ? {} : { input });
  const forbidden = /Forbidden|forbidden/;

  before(async () => {
    // The CRD and the roles as installed above; the roles reach the built-in ones through the controller.
    await kube.kubectlOk(['wait', '--for=condition=Established', `crd/${CRD_NAME}`, '--timeout=120s']);
    await kube.kubectlOk(['create', 'namespace', 'team-a']);
    await kube.kubectlOk(['create', 'namespace', 'team-b']);
    for (const args of commandsOf('docs/install.md', '## Access for your users', 'kubectl')) await kube.kubectlOk(args);
    await kube.kubectlOk(['create', 'rolebinding', 'bob-view', '--clusterrole=view', '--user=bob', '--namespace', 'team-a']);
    await kube.kubectlOk(['create', 'rolebinding', 'carol-admin', '--clusterrole=admin', '--user=carol', '--namespace', 'team-a']);
    await until(
      async () => {
        const edit = JSON.parse(await kube.kubectlOk(['get', 'clusterrole', 'edit', '-o', 'json'])) as { rules?: Obj[] };
        return edit.rules?.some((r) => (r['resources'] as string[] | undefined)?.includes(PLURAL));
      },
      { what: 'the edit role includes wasmcloudapplications', timeoutMs: 60_000 },
    );
  });

  it('an edit binding lets alice create, change and delete an application in her namespace, but not its status', async () => {
    assert.equal((await as('alice', ['apply', '-f', APP])).code, 0);
    assert.equal((await as('alice', ['label', 'wcapp', 'hello-world', 'tier=web'])).code, 0);
    assert.equal(
      (await as('alice', ['get', 'wcapp', 'hello-world', '-o', 'name'])).stdout.trim(),
      'wasmcloudapplication.core.wasmcloud.com/hello-world',
    );
    const status = await as('alice', [
      'patch',
      'wcapp',
      'hello-world',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"phase":"Deployed"}}',
    ]);
    assert.notEqual(status.code, 0);
    assert.match(status.stderr, forbidden);
    assert.equal((await as('alice', ['delete', 'wcapp', 'hello-world', '--wait=false'])).code, 0);
  });

  it('the binding is per namespace: alice may not create one in team-b', async () => {
    const run = await kube.kubectl(['--user', 'alice', '--namespace', 'team-b', 'apply', '-f', APP]);
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, forbidden);
  });

  it('a view binding lets bob get and list applications, and refuses him to create or delete one', async () => {
    assert.equal((await as('carol', ['apply', '-f', APP])).code, 0, 'admin may create too');
    assert.equal((await as('bob', ['get', 'wcapp', 'hello-world', '-o', 'name'])).code, 0);
    assert.match((await as('bob', ['get', 'wcapp'])).stdout, /hello-world/);
    for (const args of [
      ['apply', '-f', APP.replace('hello-world', 'complex')],
      ['delete', 'wcapp', 'hello-world'],
    ]) {
      const run = await as('bob', args);
      assert.notEqual(run.code, 0, args.join(' '));
      assert.match(run.stderr, forbidden, args.join(' '));
    }
  });
});

describe('docs/operations.md, examples/monitoring on a real API server', () => {
  it('kubectl apply -k examples/monitoring/ stores a PodMonitor that scrapes https, labelled for kube-prometheus-stack', async () => {
    const [apply] = commandsOf('docs/operations.md', '## Metrics and logs', 'kubectl');
    assert.deepEqual(apply, ['apply', '-k', 'examples/monitoring/']);
    await kube.kubectlOk(['apply', '-k', resolve(ROOT, apply[2]!)]);
    const monitor = JSON.parse(await kube.kubectlOk(['get', 'podmonitor', 'wasmcloud-metacontroller', '-n', NAMESPACE, '-o', 'json']));
    assert.equal(monitor.metadata.labels.release, 'kube-prometheus-stack');
    assert.equal(monitor.spec.podMetricsEndpoints[0].scheme, 'https');
    const rule = JSON.parse(await kube.kubectlOk(['get', 'prometheusrule', 'wasmcloud-metacontroller', '-n', NAMESPACE, '-o', 'json']));
    assert.equal(rule.metadata.labels.release, 'kube-prometheus-stack');
  });
});
