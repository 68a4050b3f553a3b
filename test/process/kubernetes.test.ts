// What `kubectl apply -k` would install, checked without a cluster: manifests/ and examples/ are
// rendered with `kubectl kustomize` and read as objects; the Dockerfile is read as text. Docker
// is not needed (and not on CI): the image build itself is not run here.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Ajv } from 'ajv';
import yaml from 'js-yaml';
import { loadConfig, VARIABLES } from '../../src/plumbing/config.js';
import { buildCrd, GROUP, KIND, PLURAL, VERSION } from '../../src/schema/crd.js';
import { buildLatticeCrd, LATTICE_KIND, LATTICE_PLURAL } from '../../src/schema/lattice-crd.js';
import { LATTICE_REASONS, type LatticeReason } from '../../src/core/lattice-reasons.js';
import type { Parent } from '../../src/schema/hook.js';
import { HOOK_PATHS, LATTICE_HOOK_PATH } from '../../src/server.js';
import { buildStatus, fromWadm, kstatusConditions } from '../../src/core/status.js';
import { validateParent } from '../../src/core/validate.js';
import { REASONS, suspended, unavailable, verdict, type Reason, type Verdict } from '../../src/core/reasons.js';

const ROOT = resolve(import.meta.dirname, '../..');
const DIRS = [
  'manifests',
  'examples/secure-install',
  'examples/existing-lattice',
  'examples/monitoring',
  'examples/lattice',
  'examples/apps',
  'examples/lattices',
  'examples/gitops/flux',
  'examples/gitops/argocd',
];
const HOOK_TIMEOUT_SECONDS = 10; // Metacontroller's default, and what compositecontroller.yaml sets

type Obj = Record<string, any>; // rendered Kubernetes objects: read by path, asserted by value

function kustomize(dir: string): string {
  const run = spawnSync(process.env['KUBECTL_BIN'] || 'kubectl', ['kustomize', dir], { encoding: 'utf8' });
  if (run.error) {
    throw new Error(
      `cannot run \`kubectl kustomize ${dir}\` (${run.error.message}): run \`bash scripts/test-deps.sh\`, which builds the pinned kubectl these checks use`,
    );
  }
  if (run.status !== 0) throw new Error(`kubectl kustomize ${dir} failed:\n${run.stderr}`);
  return run.stdout;
}

const rendered = new Map<string, Obj[]>();
function render(dir: string): Obj[] {
  if (!rendered.has(dir)) rendered.set(dir, yaml.loadAll(kustomize(resolve(ROOT, dir))) as Obj[]);
  return rendered.get(dir)!;
}

function only(objects: Obj[], kind: string, name?: string): Obj {
  const found = objects.filter((o) => o['kind'] === kind && (name === undefined || o['metadata'].name === name));
  assert.equal(found.length, 1, `expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length}`);
  return found[0]!;
}

const read = (path: string) => readFileSync(resolve(ROOT, path), 'utf8');
const envNames = new Set(Object.values(VARIABLES).map((v) => v.env));
const variable = (env: string) => Object.values(VARIABLES).find((v) => v.env === env);

const manifests = () => render('manifests');
const deployment = () => only(manifests(), 'Deployment', 'wasmcloud-metacontroller');
const podSpec = () => deployment()['spec'].template.spec as Obj;
const container = () => podSpec()['containers'][0] as Obj;
const configMap = () => only(manifests(), 'ConfigMap');

describe('kubectl kustomize', () => {
  it('renders manifests/ and every example directory into objects with apiVersion, kind and metadata.name', () => {
    for (const dir of DIRS) {
      const objects = render(dir);
      assert.ok(objects.length > 0, `${dir} renders nothing`);
      for (const o of objects) {
        assert.ok(o['apiVersion'] && o['kind'] && o['metadata']?.name, `${dir}: incomplete object ${JSON.stringify(o).slice(0, 120)}`);
      }
    }
  });

  it('installs the CRDs, the CompositeControllers, the service and roles for its users, with no RBAC for the service, which needs none', () => {
    // The ConfigMap's name ends in a hash of its content, so that a change rolls the pods.
    const kinds = manifests().map((o) => `${o['kind']}/${o['metadata'].name}`.replace(/^(ConfigMap\/.*)-[a-z0-9]{10}$/, '$1-<hash>'));
    assert.deepEqual(kinds.sort(), [
      'ClusterRole/wasmcloud-metacontroller-edit',
      'ClusterRole/wasmcloud-metacontroller-lattice-admin',
      'ClusterRole/wasmcloud-metacontroller-lattice-view',
      'ClusterRole/wasmcloud-metacontroller-view',
      'CompositeController/wasmcloudapplication-controller',
      'CompositeController/wasmcloudlattice-controller',
      'ConfigMap/wasmcloud-metacontroller-<hash>',
      `CustomResourceDefinition/${PLURAL}.${GROUP}`,
      `CustomResourceDefinition/${LATTICE_PLURAL}.${GROUP}`,
      'Deployment/wasmcloud-metacontroller',
      'Namespace/wasmcloud-metacontroller',
      'NetworkPolicy/wasmcloud-metacontroller',
      'PodDisruptionBudget/wasmcloud-metacontroller',
      'Service/wasmcloud-metacontroller',
      'Service/wasmcloud-metacontroller-peers',
      'ServiceAccount/wasmcloud-metacontroller',
    ]);
    // The CRDs go out as generated, with only the common part-of label added.
    for (const [name, generated] of [
      [`${PLURAL}.${GROUP}`, buildCrd()],
      [`${LATTICE_PLURAL}.${GROUP}`, buildLatticeCrd()],
    ] as const) {
      const crd = structuredClone(only(manifests(), 'CustomResourceDefinition', name));
      assert.equal(crd['metadata'].labels['app.kubernetes.io/part-of'], 'wasmcloud');
      delete crd['metadata'].labels['app.kubernetes.io/part-of'];
      assert.deepEqual(crd, generated);
    }
  });

  it('puts the Namespace and the CRDs first and the CompositeControllers after the CRDs, so one apply works', () => {
    const order = manifests().map((o) => o['kind'] as string);
    assert.equal(order[0], 'Namespace');
    assert.equal(order[1], 'CustomResourceDefinition');
    assert.ok(order.indexOf('ServiceAccount') < order.indexOf('Deployment'));
    assert.ok(order.indexOf('ConfigMap') < order.indexOf('Deployment'));
    assert.ok(order.lastIndexOf('CustomResourceDefinition') < order.indexOf('CompositeController'), 'both CRDs before either controller');
  });

  it('puts every namespaced object in wasmcloud-metacontroller and leaves the cluster-scoped ones without a namespace', () => {
    for (const o of manifests()) {
      const clusterScoped = ['Namespace', 'CustomResourceDefinition', 'CompositeController', 'ClusterRole'].includes(o['kind']);
      assert.equal(o['metadata'].namespace, clusterScoped ? undefined : 'wasmcloud-metacontroller', `${o['kind']}/${o['metadata'].name}`);
      assert.equal(o['metadata'].labels?.['app.kubernetes.io/name'], 'wasmcloud-metacontroller', `${o['kind']} is not labelled`);
    }
  });
});

describe('the roles for users (aggregated-roles.yaml)', () => {
  const role = (name: string) => only(manifests(), 'ClusterRole', name);
  const rulesOf = (name: string) =>
    Object.fromEntries(
      (role(name)['rules'] as Obj[]).flatMap((r) => {
        assert.deepEqual(r['apiGroups'], [GROUP]);
        return (r['resources'] as string[]).map((resource) => [resource, [...(r['verbs'] as string[])].sort()]);
      }),
    );
  const READ = ['get', 'list', 'watch'];

  it('add WasmCloudApplications to the built-in admin and edit roles, to write, and to view, to read; the status only to read', () => {
    const labels = (name: string) =>
      Object.keys(role(name)['metadata'].labels).filter((l) => l.startsWith('rbac.authorization.k8s.io/aggregate-to-'));
    assert.deepEqual(labels('wasmcloud-metacontroller-edit').sort(), [
      'rbac.authorization.k8s.io/aggregate-to-admin',
      'rbac.authorization.k8s.io/aggregate-to-edit',
    ]);
    assert.deepEqual(labels('wasmcloud-metacontroller-view'), ['rbac.authorization.k8s.io/aggregate-to-view']);
    for (const name of ['wasmcloud-metacontroller-edit', 'wasmcloud-metacontroller-view'])
      for (const label of labels(name)) assert.equal(role(name)['metadata'].labels[label], 'true');
    assert.deepEqual(rulesOf('wasmcloud-metacontroller-edit'), {
      [PLURAL]: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      [`${PLURAL}/status`]: READ,
    });
    assert.deepEqual(rulesOf('wasmcloud-metacontroller-view'), { [PLURAL]: READ, [`${PLURAL}/status`]: READ });
  });

  it('add WasmCloudLattices (cluster-scoped) to view, to read, and give the platform a role of its own to declare them', () => {
    const aggregated = (name: string) =>
      Object.keys(role(name)['metadata'].labels).filter((l) => l.startsWith('rbac.authorization.k8s.io/aggregate-to-'));
    assert.deepEqual(aggregated('wasmcloud-metacontroller-lattice-view'), ['rbac.authorization.k8s.io/aggregate-to-view']);
    assert.deepEqual(rulesOf('wasmcloud-metacontroller-lattice-view'), { [LATTICE_PLURAL]: READ, [`${LATTICE_PLURAL}/status`]: READ });
    assert.deepEqual(aggregated('wasmcloud-metacontroller-lattice-admin'), [], 'bound by a ClusterRoleBinding, never by aggregation');
    assert.deepEqual(rulesOf('wasmcloud-metacontroller-lattice-admin'), {
      [LATTICE_PLURAL]: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      [`${LATTICE_PLURAL}/status`]: READ,
    });
  });
});

describe('the Deployment', () => {
  it('runs two replicas spread across nodes, and a disruption budget keeps one of them', () => {
    const spec = deployment()['spec'];
    assert.equal(spec.replicas, 2);
    assert.equal(spec.strategy.rollingUpdate.maxUnavailable, 0);
    const spread = podSpec()['topologySpreadConstraints'] as Obj[];
    assert.ok(
      spread.some(
        (c) =>
          c['topologyKey'] === 'kubernetes.io/hostname' &&
          c['labelSelector'].matchLabels['app.kubernetes.io/name'] === 'wasmcloud-metacontroller',
      ),
    );
    const pdb = only(manifests(), 'PodDisruptionBudget');
    assert.equal(pdb['spec'].minAvailable, 1);
    assert.deepEqual(pdb['spec'].selector, spec.selector);
  });

  it('runs as a numeric non-root user with a read-only root filesystem, no privilege escalation, no capabilities and RuntimeDefault seccomp', () => {
    const pod = podSpec()['securityContext'];
    assert.equal(pod.runAsNonRoot, true);
    assert.ok(Number.isInteger(pod.runAsUser) && pod.runAsUser > 0);
    assert.ok(Number.isInteger(pod.runAsGroup) && pod.runAsGroup > 0);
    assert.equal(pod.seccompProfile.type, 'RuntimeDefault');
    const own = container()['securityContext'];
    assert.equal(own.allowPrivilegeEscalation, false);
    assert.equal(own.readOnlyRootFilesystem, true);
    assert.deepEqual(own.capabilities, { drop: ['ALL'] });
    assert.equal(own.privileged ?? false, false);
  });

  it('has no Kubernetes API token: its ServiceAccount and pod do not mount one', () => {
    assert.equal(only(manifests(), 'ServiceAccount')['automountServiceAccountToken'], false);
    assert.equal(podSpec()['automountServiceAccountToken'], false);
    assert.equal(podSpec()['serviceAccountName'], 'wasmcloud-metacontroller');
  });

  it('serves on the named port http (8080, the PORT default), probing /healthz for liveness and /readyz for readiness', () => {
    const c = container();
    assert.deepEqual(c['ports'], [{ name: 'http', containerPort: Number(variable('PORT')!.default), protocol: 'TCP' }]);
    assert.deepEqual(c['livenessProbe'].httpGet, { path: '/healthz', port: 'http' });
    assert.deepEqual(c['readinessProbe'].httpGet, { path: '/readyz', port: 'http' });
  });

  it('gives a terminating pod time to leave the endpoints and finish hook calls in flight before SIGKILL', () => {
    const preStop = Number(container()['lifecycle']?.preStop?.sleep?.seconds ?? 0);
    const shutdownDelay = variable('SHUTDOWN_DELAY_MS'); // the service's own drain delay, where it has one
    const delay = Number(configMap()['data'].SHUTDOWN_DELAY_MS ?? shutdownDelay?.default ?? 0) / 1000;
    assert.ok(preStop + delay >= 3, 'nothing keeps serving while the endpoints drop the pod');
    assert.ok(
      podSpec()['terminationGracePeriodSeconds'] > preStop + delay + HOOK_TIMEOUT_SECONDS,
      'the grace period ends before a hook call can finish',
    );
  });

  it('requests little CPU, the memory an idle replica uses (BENCHMARKS.md), and limits memory', () => {
    const { requests, limits } = container()['resources'];
    assert.deepEqual(requests, { cpu: '50m', memory: '96Mi' });
    assert.equal(limits.memory, '512Mi');
  });

  it('takes its environment only from the generated ConfigMap, which holds only variables of src/plumbing/config.ts with valid values', () => {
    const c = container();
    for (const env of c['env'] ?? []) assert.ok(envNames.has(env.name), `${env.name} is not in src/plumbing/config.ts`);
    assert.deepEqual(c['envFrom'], [{ configMapRef: { name: configMap()['metadata'].name } }]);
    const data = configMap()['data'] as Record<string, string>;
    assert.deepEqual(Object.keys(data).sort(), [
      'DEFAULT_LATTICE',
      'HOOK_TIMEOUT',
      'LOG_LEVEL',
      'NATS_URL',
      'PEERS',
      'WADM_API_PREFIX',
      'WADM_TIMEOUT_MS',
    ]);
    for (const name of Object.keys(data)) assert.ok(envNames.has(name), `${name} is not in src/plumbing/config.ts`);
    const loaded = loadConfig(data);
    assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.join('; '));
  });

  it('mounts the optional NATS Secret read-only where every commented-out setting of config.env points', () => {
    const mount = (container()['volumeMounts'] as Obj[]).find((m) => m['name'] === 'nats-secrets')!;
    assert.equal(mount['readOnly'], true);
    const volume = (podSpec()['volumes'] as Obj[]).find((v) => v['name'] === 'nats-secrets')!;
    assert.deepEqual(volume['secret'], { secretName: 'wasmcloud-metacontroller-nats', optional: true, defaultMode: 0o440 });
    const commented = [...read('manifests/config.env').matchAll(/^# ([A-Z][A-Z_]+)=(\S+)$/gm)];
    assert.ok(commented.length >= 8, 'config.env shows how to set NATS authentication and TLS');
    for (const [, name, value] of commented) {
      assert.ok(envNames.has(name!), `${name} is not in src/plumbing/config.ts`);
      if (name!.endsWith('_FILE')) assert.ok(value!.startsWith(`${mount['mountPath']}/`), `${name} points outside the Secret`);
    }
  });

  it("runs the image tag of package.json's version, set by kustomize images: so `kustomize edit set image` overrides it", () => {
    const pkg = JSON.parse(read('package.json')) as { version: string };
    const image = 'ghcr.io/wasmcloud-metacontroller/wasmcloud-metacontroller';
    assert.equal(container()['image'], `${image}:${pkg.version}`);
    assert.match(
      read('manifests/deployment.yaml'),
      new RegExp(`image: ${image.replace(/[./]/g, '\\$&')}\n`),
      'the tag belongs in kustomization.yaml',
    );
    const kustomization = yaml.load(read('manifests/kustomization.yaml')) as Obj;
    assert.deepEqual(kustomization['images'], [{ name: image, newTag: pkg.version }]);
  });
});

describe('the CompositeController and the Service', () => {
  it("calls the Service on port 80, whose target port http is the container's 8080, at the paths the server registers", () => {
    const service = only(manifests(), 'Service', 'wasmcloud-metacontroller');
    const controller = only(manifests(), 'CompositeController', 'wasmcloudapplication-controller');
    assert.deepEqual(controller['spec'].parentResource, { apiVersion: `${GROUP}/${VERSION}`, resource: PLURAL });
    const lattices = only(manifests(), 'CompositeController', 'wasmcloudlattice-controller');
    assert.deepEqual(lattices['spec'].parentResource, { apiVersion: `${GROUP}/${VERSION}`, resource: LATTICE_PLURAL });
    assert.deepEqual(Object.keys(lattices['spec'].hooks), ['sync'], 'no finalize: nothing outside Kubernetes to clean up');
    const hooks: [Obj, string][] = [
      ...Object.entries(HOOK_PATHS).map(([hook, path]): [Obj, string] => [controller['spec'].hooks[hook].webhook, path]),
      [lattices['spec'].hooks.sync.webhook, LATTICE_HOOK_PATH],
    ];
    for (const [webhook, path] of hooks) {
      assert.equal(webhook.path, path);
      assert.equal(webhook.timeout, `${HOOK_TIMEOUT_SECONDS}s`);
      assert.deepEqual(webhook.service, {
        name: service['metadata'].name,
        namespace: service['metadata'].namespace,
        port: 80,
        protocol: 'http',
      });
    }
    const port = (service['spec'].ports as Obj[]).find((p) => p['port'] === 80)!;
    assert.equal(port['targetPort'], 'http');
    assert.equal(container()['ports'].find((p: Obj) => p['name'] === port['targetPort']).containerPort, 8080);
    assert.deepEqual(service['spec'].selector, deployment()['spec'].selector.matchLabels);
  });

  it("gives the service the same hook timeout as Metacontroller's, so that every call ends within it", () => {
    const controller = only(manifests(), 'CompositeController', 'wasmcloudapplication-controller');
    const data = configMap()['data'] as Record<string, string>;
    for (const hook of Object.keys(HOOK_PATHS))
      assert.equal(controller['spec'].hooks[hook].webhook.timeout, data['HOOK_TIMEOUT'], `${hook} hook`);
    const lattices = only(manifests(), 'CompositeController', 'wasmcloudlattice-controller');
    assert.equal(lattices['spec'].hooks.sync.webhook.timeout, data['HOOK_TIMEOUT'], 'lattice sync hook');
  });

  it('lets each replica find every other, ready or not, through the headless Service that PEERS names', () => {
    const peers = only(manifests(), 'Service', 'wasmcloud-metacontroller-peers');
    assert.equal(peers['spec'].clusterIP, 'None');
    assert.equal(peers['spec'].publishNotReadyAddresses, true);
    assert.deepEqual(peers['spec'].selector, deployment()['spec'].selector.matchLabels);
    const port = (peers['spec'].ports as Obj[])[0]!;
    assert.equal(container()['ports'].find((p: Obj) => p['name'] === port['targetPort']).containerPort, port['port']);
    const data = configMap()['data'] as Record<string, string>;
    assert.equal(data['PEERS'], `${peers['metadata'].name}.${peers['metadata'].namespace}.svc:${port['port']}`);
  });
});

describe('the NetworkPolicy', () => {
  const policy = () => only(manifests(), 'NetworkPolicy');
  const namespaceOf = (peer: Obj) => peer['namespaceSelector']?.matchLabels?.['kubernetes.io/metadata.name'];

  it("admits Metacontroller's namespace and Prometheus, and only on the http port, to the service's pods", () => {
    assert.deepEqual(policy()['spec'].podSelector.matchLabels, deployment()['spec'].selector.matchLabels);
    assert.deepEqual(policy()['spec'].policyTypes, ['Ingress', 'Egress']);
    const rules = policy()['spec'].ingress as Obj[];
    const sources = rules.map((r) => namespaceOf(r['from'][0]) ?? r['from'][0].podSelector.matchLabels['app.kubernetes.io/name']);
    // The middle rule: the other replicas (a podSelector alone: this namespace) asking for /natsz.
    assert.deepEqual(sources, ['metacontroller', 'wasmcloud-metacontroller', 'monitoring']);
    assert.deepEqual(rules[1]!['from'][0].podSelector.matchLabels, deployment()['spec'].selector.matchLabels);
    assert.deepEqual(rules[2]!['from'][0].podSelector.matchLabels, { 'app.kubernetes.io/name': 'prometheus' });
    for (const rule of rules) assert.deepEqual(rule['ports'], [{ port: 'http', protocol: 'TCP' }]);
  });

  it('lets the pods reach only their peers, DNS and the NATS of examples/lattice', () => {
    const [peers, dns, nats] = policy()['spec'].egress as Obj[];
    assert.deepEqual(peers!['to'], [{ podSelector: { matchLabels: deployment()['spec'].selector.matchLabels } }]);
    assert.deepEqual(peers!['ports'], [{ port: 8080, protocol: 'TCP' }]);
    assert.equal(dns!['to'], undefined);
    assert.deepEqual(
      dns!['ports'].map((p: Obj) => p['port']),
      [53, 53],
    );
    assert.deepEqual(nats!['ports'], [{ port: 4222, protocol: 'TCP' }]);
    const natsPod = only(render('examples/lattice'), 'StatefulSet', 'nats');
    assert.equal(namespaceOf(nats!['to'][0]), natsPod['metadata'].namespace);
    assert.deepEqual(nats!['to'][0].podSelector.matchLabels, natsPod['spec'].selector.matchLabels);
    assert.equal((policy()['spec'].egress as Obj[]).length, 3);
  });
});

describe('the Dockerfile', () => {
  interface Stage {
    from: string;
    name: string | undefined;
    lines: string[];
  }
  const dockerfile = () => {
    const text = read('Dockerfile').replace(/\\\n/g, ' ');
    const lines = text
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    const args = new Map<string, string>();
    const stages: Stage[] = [];
    for (const line of lines) {
      const [instruction, ...rest] = line.split(/\s+/);
      const upper = instruction!.toUpperCase();
      if (upper === 'ARG' && stages.length === 0) {
        const [key, value] = rest.join(' ').split('=');
        args.set(key!, value ?? '');
      } else if (upper === 'FROM') {
        const from = rest[0]!.replace(/\$\{(\w+)\}/g, (_, key: string) => args.get(key) ?? '');
        stages.push({ from, name: rest[2], lines: [] });
      } else {
        stages.at(-1)!.lines.push(line);
      }
    }
    return { stages, final: stages.at(-1)!, all: lines };
  };
  const runs = (stage: Stage) => stage.lines.filter((l) => l.startsWith('RUN '));

  it('has a build stage that runs npm ci from the lockfile and npm run build, a production-dependencies stage, an allocator stage and a small runtime stage', () => {
    const { stages } = dockerfile();
    assert.equal(stages.length, 4);
    // Debian's jemalloc, by package name: the same library on every architecture the release builds.
    assert.ok(runs(stages[2]!).some((l) => /apt-get install -y --no-install-recommends libjemalloc2\b/.test(l)));
    const [build, deps] = stages;
    assert.ok(build!.lines.some((l) => /^COPY package\.json package-lock\.json/.test(l)));
    assert.ok(runs(build!).some((l) => /\bnpm ci\b/.test(l) && !l.includes('--omit=dev')));
    assert.ok(runs(build!).some((l) => l.includes('npm run build')));
    assert.ok(deps!.lines.some((l) => /^COPY package\.json package-lock\.json/.test(l)));
    assert.ok(runs(deps!).some((l) => /\bnpm ci\b.*--omit=dev/.test(l)));
    for (const stage of stages) assert.match(stage.from, /:[\w.-]+$/, `${stage.from} has no tag`);
    for (const stage of stages) assert.doesNotMatch(stage.from, /:latest$/);
  });

  it("pins the image's Node.js line (scripts/image-node.env) by major and minor for building and runs distroless' image of that line as nonroot, both by default of an ARG", () => {
    const { stages, final } = dockerfile();
    const line = /^NODE_VERSION=\$NODE_(\d+)_VERSION$/m.exec(read('scripts/image-node.env'))![1]!;
    for (const stage of stages.slice(0, 3)) assert.match(stage.from, new RegExp(`^node:${line}\\.\\d+-[a-z]+-slim$`));
    assert.match(final.from, new RegExp(`^gcr\\.io/distroless/nodejs${line}-debian\\d+:nonroot$`));
    const raw = read('Dockerfile')
      .split('\n')
      .filter((l) => l.startsWith('FROM '));
    assert.deepEqual(raw, [
      'FROM ${NODE_IMAGE} AS build',
      'FROM ${NODE_IMAGE} AS production-dependencies',
      'FROM ${NODE_IMAGE} AS allocator',
      'FROM ${RUNTIME_IMAGE}',
    ]);
    assert.equal(final.name, undefined);
  });

  it('copies only dist/, the node_modules the bundle loads, package.json, the lockfile (for the SBOM) and jemalloc with its licence into the final stage, which runs no command at build time', () => {
    const { stages, final } = dockerfile();
    const [build, deps, allocator] = stages;
    // scripts/runtime-modules.mjs lays out /runtime from the production install (test/process/runtime-modules.test.ts).
    assert.ok(runs(deps!).includes('RUN node scripts/runtime-modules.mjs /app /runtime'));
    const copies = final.lines.filter((l) => l.startsWith('COPY '));
    assert.deepEqual(copies, [
      `COPY --from=${deps!.name} /runtime/node_modules ./node_modules`,
      `COPY --from=${build!.name} /app/dist ./dist`,
      'COPY package.json package-lock.json ./',
      `COPY --from=${allocator!.name} /out/libjemalloc.so.2 /usr/local/lib/libjemalloc.so.2`,
      `COPY --from=${allocator!.name} /out/copyright /usr/share/doc/libjemalloc2/copyright`,
    ]);
    assert.deepEqual(runs(final), []);
  });

  it('runs node on the command line directly (exec form, no npm or shell), serving by default, as the numeric non-root user the Deployment runs as', () => {
    const { final, all } = dockerfile();
    const execForm = (instruction: string) => {
      const line = final.lines.find((l) => l.startsWith(`${instruction} `))!;
      return JSON.parse(line.slice(instruction.length + 1)) as string[];
    };
    const pkg = JSON.parse(read('package.json')) as { bin: Record<string, string>; scripts: Record<string, string> };
    const bin = pkg.bin['wasmcloud-metacontroller']!;
    // --expose-gc: the service gives a burst's memory back (src/plumbing/memory-reclaim.ts); `npm start` runs it alike.
    assert.deepEqual(execForm('ENTRYPOINT'), ['/nodejs/bin/node', '--expose-gc', bin]);
    assert.equal(pkg.scripts['start'], `node --expose-gc ${bin}`);
    // jemalloc, copied from the allocator stage, gives freed memory back (the Dockerfile says why).
    assert.deepEqual(
      final.lines.filter((l) => l.startsWith('ENV ')),
      ['ENV LD_PRELOAD=/usr/local/lib/libjemalloc.so.2 MALLOC_CONF=background_thread:true'],
    );
    assert.deepEqual(execForm('CMD'), ['serve']);
    const user = final.lines.filter((l) => l.startsWith('USER ')).at(-1)!;
    const [uid, gid] = user.slice('USER '.length).split(':').map(Number);
    assert.ok(uid! > 0 && gid! > 0, 'USER must be numeric and not root');
    assert.deepEqual([uid, gid], [podSpec()['securityContext'].runAsUser, podSpec()['securityContext'].runAsGroup]);
    assert.ok(final.lines.includes(`EXPOSE ${container()['ports'][0].containerPort}`));
    assert.equal(
      all.some((l) => /^HEALTHCHECK\b/i.test(l)),
      false,
      'Kubernetes probes replace HEALTHCHECK',
    );
  });

  it('sends the build only the lockfile, the TypeScript configuration, the build scripts and src/', () => {
    const ignore = read('.dockerignore')
      .split('\n')
      .filter((l) => l && !l.startsWith('#'));
    assert.deepEqual(ignore, [
      '*',
      '!package.json',
      '!package-lock.json',
      '!tsconfig.json',
      '!tsconfig.build.json',
      '!scripts/build.mjs',
      '!scripts/runtime-modules.mjs',
      '!src',
    ]);
  });
});

describe('the examples', () => {
  const apps = () => render('examples/apps').filter((o) => o['kind'] === KIND);
  const lattice = () => render('examples/lattice');
  const host = () => only(lattice(), 'Deployment', 'wasmcloud-host');
  const hostEnv = () => Object.fromEntries((host()['spec'].template.spec.containers[0].env as Obj[]).map((e) => [e['name'], e['value']]));

  it('hello-world is the wadm hello fixture with only apiVersion and kind changed', () => {
    const fixture = readFileSync(resolve(ROOT, 'test/fixtures/wadm/hello.yaml'), 'utf8')
      .replace('\napiVersion: core.oam.dev/v1beta1\n', `\napiVersion: ${GROUP}/${VERSION}\n`)
      .replace('\nkind: Application\n', `\nkind: ${KIND}\n`);
    assert.equal(read('examples/apps/hello-world.yaml'), fixture);
  });

  it("every example WasmCloudApplication passes the CRD schema and the hook's own validation", () => {
    const crd = buildCrd() as Obj;
    const check = new Ajv({ strict: false }).compile(crd['spec'].versions[0].schema.openAPIV3Schema);
    assert.deepEqual(
      apps()
        .map((a) => a['metadata'].name)
        .sort(),
      ['blobby', 'hello-world'],
    );
    for (const app of apps()) {
      assert.ok(check(app), `${app['metadata'].name}: ${JSON.stringify(check.errors)}`);
      assert.equal(app['metadata'].namespace, 'default');
      const validation = validateParent({ ...app, metadata: { ...app['metadata'], generation: 1 } } as Parent, 'default');
      assert.ok(validation.ok, validation.ok ? '' : `${app['metadata'].name}: ${validation.problems.join('; ')}`);
    }
  });

  it("the complex example's spreads ask only for labels the example host has", () => {
    const labels = Object.fromEntries(
      Object.entries(hostEnv())
        .filter(([k]) => k.startsWith('WASMCLOUD_LABEL_'))
        .map(([k, v]) => [k.slice('WASMCLOUD_LABEL_'.length), v]),
    );
    const blobby = apps().find((a) => a['metadata'].name === 'blobby')!;
    let requirements = 0;
    for (const component of blobby['spec'].components as Obj[]) {
      for (const trait of component['traits'] ?? []) {
        for (const spread of trait['properties'].spread ?? []) {
          for (const [key, value] of Object.entries(spread['requirements'] ?? {})) {
            requirements++;
            assert.equal(labels[key], value, `${component['name']} spread ${spread['name']} needs ${key}=${value}`);
          }
        }
      }
    }
    assert.ok(requirements > 0);
  });

  it("the lattice runs NATS with JetStream (>= 2.10), wadm and a wasmCloud 1.x host, at pinned versions, where the service's defaults expect them", () => {
    const images = lattice().flatMap((o) => (o['spec']?.template?.spec?.containers ?? []).map((c: Obj) => c['image'] as string));
    assert.deepEqual(images.sort(), ['ghcr.io/wasmcloud/wadm:v0.21.1', 'ghcr.io/wasmcloud/wasmcloud:1.9.2', 'nats:2.11.17-alpine']);
    const natsConf = only(lattice(), 'ConfigMap', 'nats-config')['data']['nats.conf'] as string;
    assert.match(natsConf, /jetstream \{/);
    const data = configMap()['data'];
    const natsService = only(lattice(), 'Service', 'nats');
    assert.equal(data.NATS_URL, `nats://${natsService['metadata'].name}.${natsService['metadata'].namespace}.svc:4222`);
    assert.equal(hostEnv()['WASMCLOUD_LATTICE'], data.DEFAULT_LATTICE);
    const wadmEnv = (only(lattice(), 'Deployment', 'wadm')['spec'].template.spec.containers[0].env as Obj[]).map((e) => e['name']);
    assert.equal(wadmEnv.includes('WADM_API_PREFIX'), false, 'wadm keeps its default prefix, WADM_API_PREFIX of the service');
    assert.equal(data.WADM_API_PREFIX, 'wadm.api');
  });

  it('the lattice runs every container non-root, read-only, without privilege escalation or capabilities', () => {
    for (const o of lattice().filter((x) => x['spec']?.template)) {
      const spec = o['spec'].template.spec;
      assert.equal(spec.securityContext.runAsNonRoot, true, o['metadata'].name);
      assert.ok(spec.securityContext.runAsUser > 0, o['metadata'].name);
      assert.equal(spec.securityContext.seccompProfile.type, 'RuntimeDefault', o['metadata'].name);
      assert.equal(spec.automountServiceAccountToken, false, o['metadata'].name);
      for (const c of spec.containers as Obj[]) {
        assert.equal(c['securityContext'].allowPrivilegeEscalation, false, c['name']);
        assert.equal(c['securityContext'].readOnlyRootFilesystem, true, c['name']);
        assert.deepEqual(c['securityContext'].capabilities, { drop: ['ALL'] }, c['name']);
        assert.ok(c['livenessProbe'] && c['readinessProbe'], `${c['name']} has probes`);
        assert.ok(c['resources'].limits.memory, `${c['name']} has a memory limit`);
      }
    }
  });

  it("Flux applies examples/lattices, waits on the lattices' conditions, and only then the applications", () => {
    const ks = only(render('examples/gitops/flux'), 'Kustomization', 'wasmcloud-lattices');
    assert.equal(ks['spec'].path, './examples/lattices');
    assert.equal(ks['spec'].wait, true);
    const [expr] = ks['spec'].healthCheckExprs as Obj[];
    assert.deepEqual([expr!['apiVersion'], expr!['kind']], [`${GROUP}/${VERSION}`, LATTICE_KIND]);
    assert.match(expr!['current'], /'Ready' && c\.status == 'True'/);
    assert.match(expr!['failed'], /'Stalled' && c\.status == 'True'/);
    assert.match(expr!['inProgress'], /'Reconciling' && c\.status == 'True'/);
    const apps = only(render('examples/gitops/flux'), 'Kustomization', 'wasmcloud-apps');
    assert.deepEqual(apps['spec'].dependsOn, [{ name: 'wasmcloud-lattices' }]);
  });

  it("Flux applies examples/apps and waits on the applications' conditions", () => {
    const ks = only(render('examples/gitops/flux'), 'Kustomization', 'wasmcloud-apps');
    const repo = only(render('examples/gitops/flux'), 'GitRepository');
    assert.equal(ks['spec'].path, './examples/apps');
    assert.equal(ks['spec'].wait, true);
    assert.equal(ks['spec'].prune, true);
    assert.deepEqual(ks['spec'].sourceRef, { kind: 'GitRepository', name: repo['metadata'].name });
    const [expr] = ks['spec'].healthCheckExprs as Obj[];
    assert.deepEqual([expr!['apiVersion'], expr!['kind']], [`${GROUP}/${VERSION}`, KIND]);
    assert.match(expr!['current'], /'Ready' && c\.status == 'True'/);
    assert.match(expr!['failed'], /'Stalled' && c\.status == 'True'/);
  });

  it("Argo CD syncs examples/apps, and the argocd-cm patch adds the health check under the CRD's group and kind", () => {
    const app = only(render('examples/gitops/argocd'), 'Application');
    assert.equal(app['spec'].source.path, 'examples/apps');
    const dir = mkdtempSync(join(tmpdir(), 'argocd-cm-'));
    try {
      // A stand-in for Argo CD's own argocd-cm, to show the file works as a kustomize patch.
      writeFileSync(
        join(dir, 'argocd-cm.yaml'),
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm, namespace: argocd}\ndata: {url: https://argocd.example}\n',
      );
      writeFileSync(join(dir, 'argocd-cm-patch.yaml'), read('examples/gitops/argocd/argocd-cm-patch.yaml'));
      writeFileSync(join(dir, 'kustomization.yaml'), 'resources: [argocd-cm.yaml]\npatches: [{path: argocd-cm-patch.yaml}]\n');
      const [cm] = yaml.loadAll(kustomize(dir)) as Obj[];
      assert.equal(cm!['data'].url, 'https://argocd.example', 'the patch keeps the other settings');
      assert.equal(cm!['data'][HEALTH_KEY], healthLua());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const HEALTH_KEY = `resource.customizations.health.${GROUP}_${KIND}`;
function healthLua(key = HEALTH_KEY): string {
  return (yaml.load(read('examples/gitops/argocd/argocd-cm-patch.yaml')) as Obj)['data'][key];
}

/** Argo CD runs health checks with gopher-lua (Lua 5.1): prefer that version. */
function luaInterpreter(): string | undefined {
  return ['lua5.1', 'luajit', 'lua', 'lua5.4', 'lua5.3'].find((bin) => !spawnSync(bin, ['-v']).error);
}

function toLua(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'string') return `"${value.replace(/[\\"]/g, '\\$&').replace(/\n/g, '\\n')}"`;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `{${value.map(toLua).join(', ')}}`;
  const entries = Object.entries(value as object).filter(([, v]) => v !== undefined && v !== null);
  return `{${entries.map(([k, v]) => `[${toLua(k)}] = ${toLua(v)}`).join(', ')}}`;
}

/** The health Argo CD would show for an object, by running the shipped script on it. */
function argoHealth(lua: string, obj: unknown, key = HEALTH_KEY): { status: string; message: string } {
  const program = `obj = ${toLua(obj)}\nlocal hs = (function()\n${healthLua(key)}\nend)()\nio.write(hs.status, "\\t", hs.message or "")\n`;
  const run = spawnSync(lua, ['-'], { input: program, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const [status, message] = run.stdout.split('\t');
  return { status: status!, message: message ?? '' };
}

describe('the Argo CD health check', () => {
  const lua = luaInterpreter();
  // scripts/test-deps.sh installs lua5.1: a missing interpreter is a failure, not a skip.
  it('has a Lua interpreter to run the script with (bash scripts/test-deps.sh installs lua5.1)', () => assert.ok(lua));
  const skip = lua ? false : 'no Lua interpreter';
  const VERSION_ID = 'sha-0123456789abcdef';
  const wadm = (type: string, message?: string, predatesDeploy = false) =>
    fromWadm(VERSION_ID, 'default', {
      predatesDeploy,
      status: {
        status: { type, ...(message ? { message } : {}) },
        scalers: [{ kind: 'SpreadScaler', name: 'hello_world-http_component', status: { type, ...(message ? { message } : {}) } }],
      },
    } as Parameters<typeof fromWadm>[2]);
  const app = (verdict: Verdict | undefined, generation = 1, statusGeneration = generation) => ({
    apiVersion: `${GROUP}/${VERSION}`,
    kind: KIND,
    metadata: { name: 'hello-world', namespace: 'default', generation },
    spec: { components: [] },
    ...(verdict
      ? { status: buildStatus({ generation: statusGeneration, lattice: 'default', previous: undefined, now: 0 }, verdict).status }
      : {}),
  });

  const cases: [string, unknown, string, RegExp][] = [
    ['no status yet', app(undefined), 'Progressing', /Waiting for wasmcloud-metacontroller/],
    ["only Metacontroller's observedGeneration", { ...app(undefined), status: { observedGeneration: 1 } }, 'Progressing', /become ready/],
    ['a status of an older generation, even Deployed', app(wadm('deployed'), 2, 1), 'Progressing', /generation 2/],
    ['wadm reports the version deployed', app(wadm('deployed')), 'Healthy', new RegExp(`Version ${VERSION_ID} is deployed`)],
    ['deployed, status not yet about this version', app(wadm('deployed', undefined, true)), 'Progressing', /waiting for wadm to report/],
    ['wadm is reconciling', app(wadm('reconciling', 'scaling up')), 'Progressing', /scaling up/],
    ['wadm waits for hosts', app(wadm('waiting')), 'Progressing', /waiting for hosts/],
    ['wadm has not started the version', app(wadm('undeployed')), 'Progressing', /has not started/],
    ['a scaler failed', app(wadm('failed', 'no host matches region=moon')), 'Degraded', /region=moon/],
    ['wadm reports it unhealthy', app(wadm('unhealthy', 'component crashed')), 'Degraded', /component crashed/],
    ['the spec is invalid', app(verdict('InvalidSpec', 'Invalid spec: spec.components: is required')), 'Degraded', /Invalid spec/],
    [
      'a pinned version conflicts',
      app(verdict('VersionConflict', 'change spec.version to publish this spec', { version: 'v1' })),
      'Degraded',
      /change spec.version/,
    ],
    ['spec.suspend is true', app(suspended(VERSION_ID)), 'Suspended', /Suspended/],
    [
      'the lattice is unreachable',
      app(unavailable('default', { reason: 'Timeout', message: 'no answer' }, VERSION_ID, undefined)),
      'Progressing',
      /Cannot reach wadm/,
    ],
  ];
  for (const [situation, obj, health, message] of cases) {
    it(`maps "${situation}" to ${health}`, { skip }, () => {
      const result = argoHealth(lua!, obj);
      assert.equal(result.status, health);
      assert.match(result.message, message);
    });
  }

  // Every reason of the catalogue, in every phase it appears with, gets the health its conditions call for.
  const expected = (reason: Reason) => {
    const info = REASONS[reason];
    if (info.ready === 'True') return 'Healthy';
    if (reason === 'Suspended') return 'Suspended';
    return 'condition' in info && info.condition === 'Stalled' ? 'Degraded' : 'Progressing';
  };
  for (const reason of Object.keys(REASONS) as Reason[]) {
    for (const phase of REASONS[reason].phases) {
      it(`maps reason ${reason} (phase ${phase}) to ${expected(reason)}`, { skip }, () => {
        assert.equal(
          argoHealth(lua!, app(verdict(reason, `situation ${reason}`, { phase, version: VERSION_ID }))).status,
          expected(reason),
        );
      });
    }
  }
});

describe('the Argo CD health check of a WasmCloudLattice', () => {
  const lua = luaInterpreter();
  const skip = lua ? false : 'no Lua interpreter';
  const KEY = `resource.customizations.health.${GROUP}_${LATTICE_KIND}`;
  const NOW = Date.parse('2026-03-01T12:00:00Z');
  const lattice = (status: unknown, generation = 1) => ({
    apiVersion: `${GROUP}/${VERSION}`,
    kind: LATTICE_KIND,
    metadata: { name: 'default', generation },
    ...(status === undefined ? {} : { status }),
  });
  /** A status with this reason, as the core builds it (its message says the reason). */
  const withReason = (reason: LatticeReason) => {
    const message = `situation ${reason}`;
    const conditions = kstatusConditions({ previous: undefined, generation: 1, now: NOW }, { reason, message, ...LATTICE_REASONS[reason] });
    return { observedGeneration: 1, lattice: 'default', message, conditions };
  };

  it("is in the argocd-cm patch under the lattice CRD's group and kind", () => assert.ok(healthLua(KEY)));
  it('maps "no status yet" and "an older generation" to Progressing', { skip }, () => {
    assert.equal(argoHealth(lua!, lattice(undefined), KEY).status, 'Progressing');
    assert.equal(argoHealth(lua!, lattice(withReason('LatticeReady'), 2), KEY).status, 'Progressing');
  });
  for (const reason of Object.keys(LATTICE_REASONS) as LatticeReason[]) {
    const info: { ready: string; condition?: string } = LATTICE_REASONS[reason];
    const health = info.ready === 'True' ? 'Healthy' : info.condition === 'Stalled' ? 'Degraded' : 'Progressing';
    it(`maps reason ${reason} to ${health}`, { skip }, () => {
      const result = argoHealth(lua!, lattice(withReason(reason)), KEY);
      assert.equal(result.status, health);
      assert.equal(result.message, `situation ${reason}`);
    });
  }
});

describe('the hardened install (examples/secure-install, manifests/components/secure-hooks)', () => {
  const objects = () => render('examples/secure-install');
  const cc = () => only(objects(), 'CompositeController', 'wasmcloudapplication-controller');
  const secureDeployment = () => only(objects(), 'Deployment', 'wasmcloud-metacontroller');

  it('has Metacontroller send the bearer token and verify the server with the CA of the hook certificate, over HTTPS', () => {
    const certificate = only(objects(), 'Certificate', 'wasmcloud-metacontroller-tls');
    const service = only(objects(), 'Service', 'wasmcloud-metacontroller');
    assert.deepEqual(
      service['spec'].ports.map((p: Obj) => [p['name'], p['port']]),
      [['http', 443]],
      'one port, moved to 443',
    );
    const lattices = only(objects(), 'CompositeController', 'wasmcloudlattice-controller')['spec'].hooks.sync.webhook;
    const hooks: [Obj, string][] = [
      ...Object.entries(HOOK_PATHS).map(([hook, path]): [Obj, string] => [cc()['spec'].hooks[hook].webhook, path]),
      [lattices, LATTICE_HOOK_PATH],
    ];
    for (const [webhook, path] of hooks) {
      assert.equal(webhook.path, path);
      assert.deepEqual(
        { protocol: webhook.service.protocol, port: webhook.service.port },
        { protocol: 'https', port: service['spec'].ports[0].port },
      );
      assert.equal(webhook.authorization.type, 'Bearer');
      assert.equal(webhook.authorization.secretRef.name, 'wasmcloud-metacontroller-hook-token');
      assert.deepEqual(webhook.caBundle.secretRef, {
        name: certificate['spec'].secretName,
        namespace: 'wasmcloud-metacontroller',
        key: 'ca.crt',
      });
    }
    assert.ok(
      certificate['spec'].dnsNames.includes('wasmcloud-metacontroller.wasmcloud-metacontroller'),
      'the name the CompositeController calls',
    );
  });

  it('has the service read the same token and serve the certificate, with probes over HTTPS', () => {
    const container = secureDeployment()['spec'].template.spec.containers[0] as Obj;
    const env = Object.fromEntries((container['env'] as Obj[]).map((e) => [e['name'], e['value']]));
    for (const name of Object.keys(env)) assert.ok(envNames.has(name), `${name} is not read by src/plumbing/config.ts`);
    const mounts = Object.fromEntries((container['volumeMounts'] as Obj[]).map((m) => [m['name'], m['mountPath']]));
    const volumes = Object.fromEntries(
      (secureDeployment()['spec'].template.spec.volumes as Obj[]).map((v) => [v['name'], v['secret']?.secretName]),
    );
    assert.equal(volumes['hook-token'], 'wasmcloud-metacontroller-hook-token');
    assert.equal(volumes['tls'], 'wasmcloud-metacontroller-tls');
    assert.ok(env['HOOK_BEARER_TOKEN_FILE'].startsWith(mounts['hook-token']));
    assert.ok(env['TLS_CERT_FILE'].startsWith(mounts['tls']) && env['TLS_KEY_FILE'].startsWith(mounts['tls']));
    assert.equal(container['livenessProbe'].httpGet.scheme, 'HTTPS');
    assert.equal(container['readinessProbe'].httpGet.scheme, 'HTTPS');
  });
});
