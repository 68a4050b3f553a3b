// README.md's install from source, run as the page writes it: the sh block after
// `<!-- install-from-source` through one bash, line by line (test/support/doc-blocks.ts), against
// a real kube-apiserver, building and pushing the image as the page says.
//
// A cluster has a kubelet and Metacontroller; this one has neither. So once the page's `helm
// install` has created the Deployment, this file plays both while the page's commands go on: the
// kubelet pulls the image the Deployment names from the registry and runs it as the Deployment
// says (test/support/installed.ts: its securityContext and ConfigMap, host networking on a free
// loopback port), and the Metacontroller emulator calls the hooks the installed CompositeController
// names. The page's last command, `kubectl wait --for=condition=Ready`, then sees hello-world Ready
// on the real API server, deployed by the real wadm to a simulated host.
//
// What the test changes, each asserted to be on the page exactly once:
//   - the two settings the page asks the reader to choose: REPOSITORY is a registry on loopback
//     (`crane registry serve`, scripts/image-engine.sh), NATS_URL the test's nats-server;
//   - `docker build` gets `--network host` and the stand-in bases as NODE_IMAGE and RUNTIME_IMAGE:
//     no registry of base images can be reached here (scripts/lib/image-bases.sh).
// And the environment the lines run in: docker, helm and kubectl on PATH (helm and kubectl the
// pinned ones of scripts/test-deps.sh), DOCKER_HOST and DOCKER_CONFIG for the engine of
// scripts/image-engine.sh (DOCKER_BUILDKIT=0: the classic builder, as the image tier builds),
// KUBECONFIG for the test's API server, HOME a scratch directory (helm's cache).
//
// Skips with one line where no Docker engine can run (not root, ...) and under CI_SCOPE=line (the
// image pins its own Node: one CI line runs this). The image it built is kept for the image and
// release tiers (scripts/lib/image-bases.sh: PRODUCT_CACHE), which then check it without building it again.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import yaml from 'js-yaml';
import { docker, type Obj } from '../support/container.js';
import { markedBlock, runBlock, settingsOf, substituted } from '../support/doc-blocks.js';
import { startLattice, WADM_STALL_TOLERANT_MS, type SimulatedLattice } from '../support/host-sim.js';
import { engineUnavailable, startImageEngine, type ImageEngine } from '../support/image-engine.js';
import { runInstalled } from '../support/installed.js';
import { startKubeCluster, type KubeCluster } from '../support/kube/cluster.js';
import { applyCrds } from '../support/kube/crd.js';
import { condition } from '../support/metacontroller.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { binaryFrom } from '../support/processes.js';
import { startWadm, type WadmProcess } from '../support/wadm.js';
import { until } from '../support/wait.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BLOCK = markedBlock('README.md', 'install-from-source');
const NAMESPACE = 'wasmcloud-metacontroller';
const BUILD_MS = 15 * 60_000; // a first build of the image (npm ci in the build stage) on 2 busy cores
const app = yaml.load(readFileSync(resolve(ROOT, 'examples/apps/hello-world.yaml'), 'utf8')) as Obj;

/** The page's lines as this test runs them (see the top of the file). */
function procedure(engine: ImageEngine, natsUrl: string): string {
  return substituted(BLOCK, [
    { from: /^REPOSITORY=.*$/, to: `REPOSITORY=${engine.registry}/wasmcloud-metacontroller`, why: 'a registry on loopback' },
    { from: /^NATS_URL=.*$/, to: `NATS_URL=${natsUrl}`, why: "the test's nats-server" },
    {
      from: 'docker build -t "$IMAGE" .',
      to: `docker build --network host --build-arg NODE_IMAGE=${engine.buildBase} --build-arg RUNTIME_IMAGE=${engine.runtimeBase} -t "$IMAGE" .`,
      why: 'no registry of base images is reachable: the stand-ins',
    },
  ]);
}

describe("README.md's install from source, as a page", () => {
  it('asks the reader for two settings, the repository to push to and the NATS of the lattice, and builds the checkout as it is', () => {
    assert.deepEqual(settingsOf(BLOCK), ['REPOSITORY', 'NATS_URL']);
    const commands = BLOCK.split('\n').map((line) => line.split(' ')[0]);
    for (const tool of ['docker', 'helm', 'kubectl']) assert.ok(commands.includes(tool), tool);
    assert.match(BLOCK, /^helm install wasmcloud-metacontroller charts\/wasmcloud-metacontroller /m);
    assert.match(BLOCK, /^kubectl apply -f examples\/apps\/hello-world\.yaml$/m);
    assert.match(BLOCK, /^kubectl wait --for=condition=Ready wcapp\/hello-world /m);
  });

  it('has, once each, the lines the run below changes', () => {
    const engine = { registry: '127.0.0.1:1', buildBase: 'build-base', runtimeBase: 'runtime-base' } as ImageEngine;
    const lines = procedure(engine, 'nats://127.0.0.1:2');
    assert.match(lines, /^REPOSITORY=127\.0\.0\.1:1\/wasmcloud-metacontroller$/m);
    assert.match(
      lines,
      /^docker build --network host --build-arg NODE_IMAGE=build-base --build-arg RUNTIME_IMAGE=runtime-base -t "\$IMAGE" \.$/m,
    );
  });
});

const unavailable = process.env['CI_SCOPE'] === 'line' ? 'CI_SCOPE=line: the newest Node line runs it' : engineUnavailable();

describe("README.md's install from source, run as written", { skip: unavailable }, () => {
  let engine: ImageEngine | undefined;
  let kube: KubeCluster | undefined;
  let nats: NatsServer | undefined;
  let wadm: WadmProcess | undefined;
  let sim: SimulatedLattice | undefined;
  const scratch = mkdtempSync(join(tmpdir(), 'readme-install-'));
  const container = `readme-install-${process.pid}`;

  before(async () => {
    engine = await startImageEngine();
    kube = await startKubeCluster();
    // Metacontroller is installed first, as the page says: its CompositeController kind.
    const stubCrd = readFileSync(resolve(ROOT, 'test/fixtures/kube/compositecontroller-crd.yaml'), 'utf8');
    await applyCrds(kube, stubCrd, ['compositecontrollers.metacontroller.k8s.io']);
    nats = await startNatsServer();
    wadm = await startWadm(nats.url);
    sim = await startLattice({ servers: nats.url, lattice: 'default', hosts: [{ labels: {} }], heartbeatMs: 500, waitForWadm: true });
  });
  after(async () => {
    if (engine) docker(['rm', '-f', container]);
    await kube?.stop();
    await sim?.stop();
    await wadm?.stop();
    await nats?.dispose();
    await engine?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('builds and pushes the image, helm installs it from the checkout, and hello-world becomes Ready', async (t) => {
    const bin = join(scratch, 'bin');
    mkdirSync(bin);
    symlinkSync(binaryFrom('HELM_BIN'), join(bin, 'helm'));
    symlinkSync(binaryFrom('KUBECTL_BIN'), join(bin, 'kubectl'));
    symlinkSync(process.env['IMAGE_TEST_DOCKER']!, join(bin, 'docker'));
    const started = Date.now();
    const run = runBlock(procedure(engine!, nats!.url), {
      cwd: ROOT,
      env: { ...engine!.dockerEnv, PATH: `${bin}:${process.env['PATH']}`, KUBECONFIG: kube!.kubeconfig, HOME: scratch },
    });
    const failed = async () => assert.fail(`the page's commands stopped:\n${(await run.done).output}`);

    // The kubelet: once helm has installed the Deployment, it pulls what the Deployment names.
    const deployment = [
      'get',
      'deployment',
      '-n',
      NAMESPACE,
      'wasmcloud-metacontroller',
      '-o',
      'jsonpath={.spec.template.spec.containers[0].image}',
    ];
    const image = await until(async () => run.exited() || (await kube!.kubectl(deployment)).stdout, {
      what: () => `helm install's Deployment; the page's output so far:\n${run.output()}`,
      timeoutMs: BUILD_MS,
      intervalMs: 500,
    });
    if (image === true) await failed();
    const tag = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
    assert.equal(image, `${engine!.registry}/wasmcloud-metacontroller:${tag}`, 'the Deployment runs the image the page built');
    // Gone from the engine, so that running it pulls what the page pushed, as a node would.
    assert.equal(docker(['rmi', String(image)]).code, 0);
    const installed = await runInstalled(kube!, container);
    assert.equal(installed.variables['NATS_URL'], nats!.url, 'helm set config.natsUrl in the ConfigMap');

    // Metacontroller: syncs hello-world (once the page applies it) until Ready, while the page waits for that.
    const ready = await installed.metacontroller.waitFor(
      'default',
      app['metadata'].name,
      (obj) => run.exited() || condition(obj, 'Ready')?.status === 'True',
      { timeoutMs: WADM_STALL_TOLERANT_MS * 2, intervalMs: 200 },
    );
    if (run.exited() && condition(ready.object, 'Ready')?.status !== 'True') await failed();
    const { code, output } = await run.done;
    assert.equal(code, 0, output);
    assert.match(output, /^wasmcloudapplication\.core\.wasmcloud\.com\/hello-world condition met$/m);
    assert.ok(sim!.components().length > 0, 'the host runs the component');
    t.diagnostic(`the page's commands took ${Math.round((Date.now() - started) / 1000)} s, the image's build included`);

    // Kept for the image and release tiers, which check this image instead of building it again.
    assert.equal(docker(['tag', String(image), engine!.productCache]).code, 0);
  });
});
