// The release tier's checks, run by scripts/release-test.sh on the release it has just made with
// scripts/release.sh into a registry on loopback (RELEASE_* variables), taken as a user takes it:
// verified with the public key, pulled by digest, installed on a real kube-apiserver from
// install.yaml and from the chart in the registry, then run as the installed Deployment says and
// driven by the Metacontroller emulator through the installed CompositeController's hooks.
// Not a *.test.ts file: `npm test` has no engine and no registry.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { docker, required, type Obj } from '../support/container.js';
import { markedBlock, runBlock, substituted } from '../support/doc-blocks.js';
import { runInstalled } from '../support/installed.js';
import { startKubeCluster, type KubeCluster } from '../support/kube/cluster.js';
import { applyCrds, CRD_NAME } from '../support/kube/crd.js';
import { startLattice, WADM_STALL_TOLERANT_MS, type SimulatedLattice } from '../support/host-sim.js';
import { condition, type FakeMetacontroller } from '../support/metacontroller.js';
import type { KubeParentStore } from '../support/metacontroller/kube-parent-store.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { wasmApp } from '../support/resources.js';
import { startWadm, type WadmProcess } from '../support/wadm.js';

const ROOT = resolve(import.meta.dirname, '../..');
const DIR = required('RELEASE_DIR');
/** The image's Node.js line (scripts/image-node.env names its pin in scripts/node-lines.env). */
const IMAGE_NODE_LINE = /^NODE_VERSION=\$NODE_(\d+)_VERSION$/m.exec(readFileSync(resolve(ROOT, 'scripts/image-node.env'), 'utf8'))![1]!;
const REGISTRY = required('RELEASE_REGISTRY');
const PUBLIC_KEY = required('COSIGN_PUB');
const release = Object.fromEntries(
  readFileSync(join(DIR, 'release.env'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
) as { VERSION: string; IMAGE: string; CHART: string; REVISION: string };
const CHART_TGZ = join(DIR, `wasmcloud-metacontroller-${release.VERSION}.tgz`);
const scratch = mkdtempSync(join(tmpdir(), 'release-checks-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

function run(command: string, args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', env: { ...process.env, ...env } });
  return { code: result.status, out: `${result.stdout}${result.stderr}` };
}
const verify = (dir: string, key = PUBLIC_KEY) =>
  run('bash', [resolve(ROOT, 'scripts/release-verify.sh'), dir, '--key', key, '--plain-http']);
const crane = (...args: string[]) => run(required('CRANE_BIN'), ['--insecure', ...args]);
/**
 * The commands of a page for a release, as this tier runs them (test/support/doc-blocks.ts), each
 * change asserted to find its text on the page once. The release is signed with this run's key
 * pair, not keyless by the workflow: `IDENTITY` holds `--key` and the public key (offline, so no
 * transparency log) instead of the workflow's certificate identity. Its registry is on loopback in
 * place of ghcr.io, over plain HTTP: crane gets `--insecure`, and cosign's registry commands
 * `--allow-http-registry`, from the functions put before the page's lines.
 */
function releaseLines(file: string, marker: string): string {
  const lines = substituted(markedBlock(file, marker), [
    {
      from: /^IDENTITY=\([\s\S]*?\)$/,
      to: 'IDENTITY=(--key "$COSIGN_PUB" --insecure-ignore-tlog=true)',
      why: "signed with the run's key pair, not keyless",
    },
    ...['REPOSITORY=', 'CHART=']
      .filter((setting) => markedBlock(file, marker).includes(`\n${setting}ghcr.io/`))
      .map((setting) => ({
        from: `${setting}ghcr.io/wasmcloud-metacontroller/`,
        to: `${setting}${REGISTRY}/`,
        why: 'the registry on loopback',
      })),
  ]);
  const plainHttp = [
    'crane() { "$CRANE_BIN" --insecure "$@"; }',
    'cosign() { case $1 in verify | verify-attestation) "$COSIGN_BIN" "$1" --allow-http-registry "${@:2}" ;; *) "$COSIGN_BIN" "$@" ;; esac; }',
  ];
  return `${plainHttp.join('\n')}\n${lines}`;
}
const readmeReleaseLines = () =>
  substituted(releaseLines('README.md', 'install-release'), [
    { from: /^V=.*$/, to: `V=${release.VERSION}`, why: 'the version this tier released' },
    {
      from: 'gh release download "v$V" -R wasmcloud-metacontroller/wasmcloud-metacontroller -D "release-$V"',
      to: 'cp -r "$RELEASE_DIR" "release-$V"',
      why: 'no GitHub here: the release this tier made',
    },
  ]);

/** A copy of the release to tamper with. */
function copyOfRelease(name: string): string {
  const copy = join(scratch, name);
  cpSync(DIR, copy, { recursive: true });
  return copy;
}

describe('a release, verified as a user verifies it', () => {
  it('took this long to make', (t) => {
    t.diagnostic(`scripts/release.sh: ${process.env['RELEASE_SECONDS']} s, image tier included`);
  });

  it('passes scripts/release-verify.sh: checksums, every signature and attestation, the chart in the registry', () => {
    const result = verify(DIR);
    assert.equal(result.code, 0, result.out);
    assert.match(result.out, /release .* verified/);
  });

  it('fails verification when a signed file is changed', () => {
    const copy = copyOfRelease('changed-install');
    writeFileSync(join(copy, 'install.yaml'), `${readFileSync(join(copy, 'install.yaml'), 'utf8')}# changed\n`);
    const result = verify(copy);
    assert.notEqual(result.code, 0);
    assert.match(result.out, /FAILED: a file differs from SHA256SUMS/);
  });

  it('fails verification when the checksums are rewritten to match a changed file', () => {
    const copy = copyOfRelease('rewritten-sums');
    const changed = readFileSync(join(copy, 'install.yaml'), 'utf8').replace('replicas: 2', 'replicas: 3');
    assert.notEqual(changed, readFileSync(join(copy, 'install.yaml'), 'utf8'));
    writeFileSync(join(copy, 'install.yaml'), changed);
    const sums = run('bash', ['-c', `cd '${copy}' && sha256sum -- *.* | grep -v ' SHA256SUMS' > SHA256SUMS`]);
    assert.equal(sums.code, 0, sums.out);
    const result = verify(copy);
    assert.notEqual(result.code, 0);
    assert.match(result.out, /FAILED: the signature over SHA256SUMS/);
  });

  it('fails verification with another key', () => {
    const keys = join(scratch, 'other-key');
    const made = run('bash', ['-c', `mkdir -p '${keys}' && cd '${keys}' && '${required('COSIGN_BIN')}' generate-key-pair`], {
      COSIGN_PASSWORD: '',
    });
    assert.equal(made.code, 0, made.out);
    const result = verify(DIR, join(keys, 'cosign.pub'));
    assert.notEqual(result.code, 0);
    assert.match(result.out, /FAILED: the signature over SHA256SUMS/);
  });

  it("lists the runtime's packages in both SBOMs: every production dependency (bundled or not) and Node.js", () => {
    const lock = JSON.parse(readFileSync(resolve(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, Obj> };
    const production = Object.entries(lock.packages)
      .filter(([path, p]) => path.startsWith('node_modules/') && !p['dev'] && !p['optional'])
      .map(([path, p]) => `${path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)}@${p['version']}`);
    assert.ok(production.length > 50, `${production.length} production packages in the lockfile`);
    const spdx = JSON.parse(readFileSync(join(DIR, `wasmcloud-metacontroller-${release.VERSION}.spdx.json`), 'utf8')) as Obj;
    const cdx = JSON.parse(readFileSync(join(DIR, `wasmcloud-metacontroller-${release.VERSION}.cdx.json`), 'utf8')) as Obj;
    const inSpdx = new Set((spdx['packages'] as Obj[]).map((p) => `${p['name']}@${p['versionInfo']}`));
    const inCdx = new Set((cdx['components'] as Obj[]).map((c) => `${c['group'] ? `${c['group']}/` : ''}${c['name']}@${c['version']}`));
    for (const listed of [inSpdx, inCdx]) {
      assert.deepEqual(
        production.filter((p) => !listed.has(p)),
        [],
        'every production package is listed',
      );
      assert.ok(
        [...listed].some((p) => p.startsWith(`node@${IMAGE_NODE_LINE}.`)),
        `the Node.js ${IMAGE_NODE_LINE} runtime is listed`,
      );
    }
  });
});

describe("the pages' commands for a release, run as written", () => {
  it("verify it with cosign and crane alone, as docs/install.md's Verify a release shows", async () => {
    const run = runBlock(releaseLines('docs/install.md', 'verify-release'), {
      cwd: copyOfRelease('verify-by-hand'),
      env: { V: release.VERSION },
    });
    const { code, output } = await run.done;
    assert.equal(code, 0, output);
    assert.match(output, /^install\.yaml: OK$/m);
  });

  it('stop at the checksums when a signed file is changed', async () => {
    const copy = copyOfRelease('verify-by-hand-changed');
    writeFileSync(join(copy, 'install.yaml'), `${readFileSync(join(copy, 'install.yaml'), 'utf8')}# changed\n`);
    const run = runBlock(releaseLines('docs/install.md', 'verify-release'), { cwd: copy, env: { V: release.VERSION } });
    const { code, output } = await run.done;
    assert.notEqual(code, 0);
    assert.match(output, /^install\.yaml: FAILED$/m);
    assert.doesNotMatch(output, /\+ cosign verify-blob .* install\.yaml$/m, 'nothing runs after the failed check');
  });
});

describe("a release of an image given as an OCI layout, as the workflow gives buildx's", () => {
  it('pushes that very image (the same digest), and verifies', () => {
    const dir = required('RELEASE_FROM_LAYOUT_DIR');
    const fromLayout = readFileSync(join(dir, 'release.env'), 'utf8');
    const digest = /^IMAGE=.*@(sha256:[0-9a-f]{64})$/m.exec(fromLayout)?.[1];
    assert.equal(digest, release.IMAGE.split('@')[1]);
    const result = verify(dir);
    assert.equal(result.code, 0, result.out);
  });
});

describe('the image and the chart, pulled by digest', () => {
  it('pulls the image by its digest, which install.yaml and the chart pin', () => {
    const pulled = docker(['pull', release.IMAGE]);
    assert.equal(pulled.code, 0, pulled.stderr);
    const install = readFileSync(join(DIR, 'install.yaml'), 'utf8');
    assert.deepEqual([...new Set(install.match(/^ *image: .*$/gm)!.map((l) => l.trim()))], [`image: ${release.IMAGE}`]);
  });

  it("pulls the chart by digest: the registry's is the release's .tgz, its default image the release's", () => {
    const pulled = join(scratch, 'pulled-chart');
    mkdirSync(pulled);
    const result = run(required('HELM_BIN'), ['pull', `oci://${release.CHART}`, '--plain-http', '-d', pulled]);
    assert.equal(result.code, 0, result.out);
    const [file] = run('bash', ['-c', `ls '${pulled}'`])
      .out.trim()
      .split('\n');
    assert.deepEqual(readFileSync(join(pulled, file!)), readFileSync(CHART_TGZ));
    const rendered = run(required('HELM_BIN'), ['template', 'r', CHART_TGZ, '--kube-version', required('KUBERNETES_VERSION')]);
    assert.equal(rendered.code, 0, rendered.out);
    assert.deepEqual(
      [...new Set(rendered.out.match(/^ *image: .*$/gm)!.map((l) => l.trim()))],
      [`image: ${release.IMAGE.replace('@', `:${release.VERSION}@`)}`],
    );
  });
});

/** The lattice the installed service talks to: a real nats-server, the real wadm, simulated hosts. */
let nats: NatsServer;
let wadm: WadmProcess;
let sim: SimulatedLattice;
// The lattice the shipped configuration lets every namespace use (DEFAULT_LATTICE, no lattice policy).
const LATTICE = 'default';
before(async () => {
  nats = await startNatsServer();
  wadm = await startWadm(nats.url);
  sim = await startLattice({ servers: nats.url, lattice: LATTICE, hosts: [{ labels: {} }], heartbeatMs: 500, waitForWadm: true });
});
after(async () => {
  await sim?.stop();
  await wadm?.stop();
  await nats?.dispose();
});

/** Runs the installed Deployment's image as its pod would (test/support/installed.ts) against this lattice's NATS. */
async function serveInstalled(kube: KubeCluster, name: string): Promise<FakeMetacontroller<KubeParentStore>> {
  const { metacontroller } = await runInstalled(kube, name, {
    overrides: { NATS_URL: nats.url },
    // install.yaml pins REPOSITORY@DIGEST, the chart REPOSITORY:VERSION@DIGEST: the digest decides.
    checkImage: (image) =>
      assert.equal(image.replace(`:${release.VERSION}@`, '@'), release.IMAGE, 'the Deployment runs the released image by digest'),
  });
  return metacontroller;
}

/** Creates an application and drives it until Ready, as Metacontroller would. */
async function deploysAnApplication(kube: KubeCluster, mc: FakeMetacontroller<KubeParentStore>, name: string): Promise<void> {
  await kube.kubectlOk(['wait', '--for=condition=Established', `crd/${CRD_NAME}`, '--timeout=120s']);
  await kube.kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(wasmApp().named(name).inLattice(LATTICE).build()) });
  const { object } = await mc.waitFor('default', name, (obj) => condition(obj, 'Ready')?.status === 'True', {
    timeoutMs: WADM_STALL_TOLERANT_MS,
    intervalMs: 100,
  });
  assert.equal((object!.status as Obj)['phase'], 'Deployed');
  assert.ok(sim.components().length > 0, 'the host runs the component');
}

describe('installed, the release serves the emulator’s hook calls', () => {
  const stubCrd = readFileSync(resolve(ROOT, 'test/fixtures/kube/compositecontroller-crd.yaml'), 'utf8');
  let kube: KubeCluster | undefined;
  const containers: string[] = [];
  after(async () => {
    for (const name of containers) docker(['rm', '-f', name]);
    await kube?.stop();
  });
  async function freshCluster(): Promise<KubeCluster> {
    await kube?.stop();
    kube = await startKubeCluster();
    await applyCrds(kube, stubCrd, ['compositecontrollers.metacontroller.k8s.io']);
    return kube;
  }

  it("from install.yaml, with README.md's lines for a release: verified, then kubectl apply", async () => {
    const cluster = await freshCluster();
    const dir = join(scratch, 'readme-release');
    mkdirSync(dir);
    const bin = join(scratch, 'readme-bin');
    mkdirSync(bin);
    symlinkSync(required('KUBECTL_BIN'), join(bin, 'kubectl'));
    const run = runBlock(readmeReleaseLines(), {
      cwd: dir,
      env: { PATH: `${bin}:${process.env['PATH']}`, KUBECONFIG: cluster.kubeconfig, HOME: scratch },
    });
    const { code, output } = await run.done;
    assert.equal(code, 0, output);
    assert.match(output, /^deployment\.apps\/wasmcloud-metacontroller created$/m);
    containers.push(`release-install-${process.pid}`);
    await deploysAnApplication(cluster, await serveInstalled(cluster, containers.at(-1)!), 'from-install-yaml');
  });

  it('from the chart in the registry, with helm install', async () => {
    const cluster = await freshCluster();
    const chartRef = `oci://${release.CHART.split('@')[0]}`;
    const result = run(
      required('HELM_BIN'),
      [
        'install',
        'wasmcloud-metacontroller',
        chartRef,
        '--version',
        release.VERSION,
        '--plain-http',
        '--namespace',
        'wasmcloud-metacontroller',
        '--create-namespace',
      ],
      { KUBECONFIG: cluster.kubeconfig, HOME: scratch },
    );
    assert.equal(result.code, 0, result.out);
    containers.push(`release-chart-${process.pid}`);
    await deploysAnApplication(cluster, await serveInstalled(cluster, containers.at(-1)!), 'from-the-chart');
  });
});

describe('a replaced image', () => {
  it('is caught: a verifier that goes by the tag finds no signature on what the tag now names', () => {
    const tag = `${REGISTRY}:${release.VERSION}`;
    const mutated = crane('mutate', release.IMAGE, '--label', 'tampered=true', '-t', tag);
    assert.equal(mutated.code, 0, mutated.out);
    const byTag = run(required('COSIGN_BIN'), ['verify', '--key', PUBLIC_KEY, '--insecure-ignore-tlog=true', '--allow-http-registry', tag]);
    assert.notEqual(byTag.code, 0, 'the replaced image has no signature');
    const byDigest = run(required('COSIGN_BIN'), [
      'verify',
      '--key',
      PUBLIC_KEY,
      '--insecure-ignore-tlog=true',
      '--allow-http-registry',
      release.IMAGE,
    ]);
    assert.equal(byDigest.code, 0, byDigest.out);
  });
});
