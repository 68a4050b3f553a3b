// The image tier's checks, run by scripts/image-test.sh against the image it has just built from
// the Dockerfile, on the Docker engine it started (IMAGE_TEST_* variables). Not a *.test.ts file:
// it runs in the tier's script, which starts the engine. The container runs as
// manifests/deployment.yaml runs the pod: its user and group, read-only root filesystem, no
// capabilities, no privilege escalation, the ConfigMap's variables; only PORT, HOST and NATS_URL
// differ, for host networking on loopback. The command line's two forms of docs/cli.md run against
// it with a real nats-server and the real wadm.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import yaml from 'js-yaml';
import { markedBlock, runBlock, substituted } from '../support/doc-blocks.js';
import { startLattice, WADM_STALL_TOLERANT_MS, type SimulatedLattice } from '../support/host-sim.js';
import { condition, metacontrollerFor } from '../support/metacontroller.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { freePort } from '../support/ports.js';
import { wasmApp, hookRequest } from '../support/resources.js';
import { startWadm, type WadmProcess } from '../support/wadm.js';
import { until } from '../support/wait.js';
import {
  docker,
  environmentFlags as flagsOf,
  parseEnvFile,
  required,
  securityFlags as securityFlagsOf,
  statusOf,
  type Obj,
} from '../support/container.js';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(resolve(ROOT, path), 'utf8');
const WAIT_MS = 60_000; // for states, on 2 shared cores with other builds running

const IMAGE = required('IMAGE_TEST_IMAGE');

function deployment(): Obj {
  return (yaml.loadAll(read('manifests/deployment.yaml')) as Obj[]).find((o) => o['kind'] === 'Deployment')!;
}
const securityFlags = () => securityFlagsOf(deployment());
/** The ConfigMap's variables (manifests/config.env) with the given ones replacing theirs. */
const environmentFlags = (overrides: Record<string, string>) => flagsOf(parseEnvFile(read('manifests/config.env')), overrides);

async function waitForStatus(url: string, expected: number): Promise<void> {
  let last: number | undefined;
  const answers = async () => (last = await statusOf(url)) === expected;
  await until(answers, { what: () => `${url} answers ${expected} (last: ${last ?? 'nothing'})`, timeoutMs: WAIT_MS, intervalMs: 100 });
}

describe('the image, run as the Deployment runs it', () => {
  const name = `image-test-${process.pid}`;
  let nats: NatsServer;
  let wadm: WadmProcess | undefined;
  let sim: SimulatedLattice | undefined;
  let base: string;

  before(async () => {
    // A real nats-server's port, free while the service starts without NATS.
    nats = await startNatsServer();
    await nats.stop();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const env = environmentFlags({ PORT: String(port), HOST: '127.0.0.1', NATS_URL: `nats://127.0.0.1:${nats.port}` });
    const run = docker(['run', '-d', '--name', name, '--network', 'host', ...securityFlags(), ...env, IMAGE]);
    assert.equal(run.code, 0, run.stderr);
  });
  after(async () => {
    docker(['rm', '-f', name]);
    await sim?.stop();
    await wadm?.stop();
    await nats.dispose();
  });

  it('runs the command line as uid and gid 65532, serving when given no command', () => {
    const config = JSON.parse(docker(['image', 'inspect', '-f', '{{json .Config}}', IMAGE]).stdout) as Obj;
    assert.equal(config['User'], '65532:65532');
    assert.deepEqual(config['Entrypoint'], ['/nodejs/bin/node', '--expose-gc', 'dist/main.js']);
    assert.deepEqual(config['Cmd'], ['serve']);
    assert.match(docker(['info', '-f', '{{json .SecurityOptions}}']).stdout, /name=seccomp,profile=default/);
  });

  it("holds none of the build machine's CA bundle, which only the build stages had", () => {
    const env = JSON.parse(docker(['image', 'inspect', '-f', '{{json .Config.Env}}', IMAGE]).stdout) as string[];
    assert.equal(
      env.some((e) => e.startsWith('NODE_EXTRA_CA_CERTS=')),
      false,
    );
    const probe = `process.stdout.write(String(require('fs').existsSync(${JSON.stringify(required('IMAGE_TEST_BUILD_CA'))})))`;
    const exists = docker(['run', '--rm', '--network', 'none', '--entrypoint', '/nodejs/bin/node', IMAGE, '-e', probe]);
    assert.equal(exists.stdout, 'false', exists.stderr);
  });

  it('ships only the node_modules the bundle loads from files (pino, pino-pretty and theirs), not the libraries inside it', () => {
    const probe = "process.stdout.write(JSON.stringify(require('fs').readdirSync('/app/node_modules')))";
    const listed = docker(['run', '--rm', '--network', 'none', '--entrypoint', '/nodejs/bin/node', IMAGE, '-e', probe]);
    assert.equal(listed.code, 0, listed.stderr);
    const names = JSON.parse(listed.stdout) as string[];
    for (const name of ['pino', 'pino-pretty', 'thread-stream', 'sonic-boom']) assert.ok(names.includes(name), name);
    for (const name of ['fastify', 'nats', '@sinclair', 'prom-client', 'js-yaml']) assert.ok(!names.includes(name), name);
  });

  it('logs human-readable lines with LOG_FORMAT=pretty (pino-pretty, from those node_modules, in a worker thread)', async (t) => {
    const pretty = `${name}-pretty`;
    const env = environmentFlags({
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      NATS_URL: 'nats://127.0.0.1:1',
      LOG_FORMAT: 'pretty',
    });
    const run = docker(['run', '-d', '--name', pretty, '--network', 'host', ...securityFlags(), ...env, IMAGE]);
    assert.equal(run.code, 0, run.stderr);
    t.after(() => docker(['rm', '-f', pretty]));
    const first = await until(
      () =>
        docker(['logs', pretty])
          .stdout.split('\n')
          .find((l) => l.includes('starting wasmcloud-metacontroller')),
      { what: 'a first log line', timeoutMs: WAIT_MS, intervalMs: 200 },
    );
    assert.throws(() => JSON.parse(first), 'a pretty line, not JSON');
    assert.match(first, /INFO/);
  });

  it('answers /healthz with 200 and /readyz with 503 while NATS is down', async () => {
    await waitForStatus(`${base}/healthz`, 200);
    assert.equal(await statusOf(`${base}/readyz`), 503);
  });

  it("runs node with the entrypoint's --expose-gc, so the service gives the memory of a burst back", () => {
    // Logged before the service listens, so it is there once /healthz answered (the test above).
    const starting = docker(['logs', name])
      .stdout.split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Obj)
      .find((l) => String(l['msg']).startsWith('starting '));
    assert.equal(starting?.['memoryReclaim'], true, JSON.stringify(starting));
  });

  it('runs the service on jemalloc, which gives freed memory back to the system (see the Dockerfile)', () => {
    // PID 1 is the service; its memory map shows what the dynamic loader preloaded.
    const probe =
      "process.stdout.write(String(require('fs').readFileSync('/proc/1/maps', 'utf8').includes('/usr/local/lib/libjemalloc.so.2')))";
    const mapped = docker(['exec', name, '/nodejs/bin/node', '-e', probe]);
    assert.equal(mapped.stdout, 'true', mapped.stderr);
  });

  it('becomes ready once a real nats-server listens at its NATS_URL', async () => {
    await nats.restart();
    await waitForStatus(`${base}/readyz`, 200);
  });

  it('answers a sync hook call through NATS: with no wadm listening, the lattice is reported unavailable', async () => {
    const response = await fetch(`${base}/sync`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(hookRequest(wasmApp().build())),
    });
    assert.equal(response.status, 200);
    const answer = (await response.json()) as Obj;
    const ready = (answer['status'].conditions as Obj[]).find((c) => c['type'] === 'Ready')!;
    assert.deepEqual([ready['status'], ready['reason']], ['Unknown', 'LatticeUnavailable']);
    // NoResponders comes from a connected NATS server: the request went through it.
    assert.match(ready['message'], /\(NoResponders\): no wadm is listening on wadm\.api\.default\./);
    assert.deepEqual(answer['children'], []);
    assert.ok(answer['resyncAfterSeconds'] > 0);
  });

  it('validates resources from stdin with `validate -` and exits 1 on an invalid one', () => {
    const validate = (yamlText: string) =>
      docker(['run', '--rm', '-i', '--network', 'none', ...securityFlags(), IMAGE, 'validate', '-'], yamlText);
    const app = read('examples/apps/hello-world.yaml');
    const valid = validate(app);
    assert.equal(valid.code, 0, valid.stderr);
    assert.match(valid.stdout, /^-: WasmCloudApplication default\/hello-world: valid, version sha-[0-9a-f]{16}\n$/);
    const dangling = app.replace(/(target:\s+name: )http-component/, '$1missing');
    assert.notEqual(dangling, app);
    const invalid = validate(dangling);
    assert.equal(invalid.code, 1, invalid.stderr);
    assert.match(
      invalid.stdout,
      /^-: WasmCloudApplication default\/hello-world: \S+: link target "missing" is not a component of this application\n$/,
    );
  });

  it('deploys an application through its hooks once wadm and a host are on the lattice', async () => {
    wadm = await startWadm(nats.url);
    sim = await startLattice({ servers: nats.url, hosts: [{ labels: {} }], heartbeatMs: 500, waitForWadm: true });
    const mc = metacontrollerFor(base);
    mc.apply(yaml.load(read('examples/apps/hello-world.yaml')) as never);
    await mc.waitFor('default', 'hello-world', (obj) => condition(obj, 'Ready')?.status === 'True', {
      timeoutMs: WADM_STALL_TOLERANT_MS,
      intervalMs: 200,
    });
  });

  /** What `status hello-world --lattice default` prints for the application deployed above. */
  function assertStatusPrinted(printed: string): void {
    const shown = yaml.load(printed) as Obj;
    assert.equal(shown['owner'], 'default/hello-world');
    assert.equal(shown['status'].phase, 'Deployed');
    assert.equal((shown['status'].conditions as Obj[]).find((c) => c['type'] === 'Ready')?.['status'], 'True');
    assert.ok((shown['versions'] as string[]).includes(shown['status'].deployedVersion), printed);
  }

  it("runs docs/cli.md's `kubectl exec` command line in the running container, with the service's NATS settings", () => {
    // No kubelet here: `kubectl exec` has the kubelet start the argv after `--` in the pod's
    // container, as a new process with the container's environment, user and working directory,
    // which is what `docker exec` does with this container, run as the Deployment runs its pod.
    const line = markedBlock('docs/cli.md', 'cli-in-the-pod').trim();
    const [kubectl, argv] = line.split(' -- ');
    const ns = deployment()['metadata'].namespace as string;
    assert.equal(kubectl, `kubectl exec -n ${ns} deploy/${deployment()['metadata'].name}`, 'the installed Deployment');
    const exec = docker(['exec', name, ...argv!.split(' ')]);
    assert.equal(exec.code, 0, exec.stderr);
    assertStatusPrinted(exec.stdout);
  });

  it("runs docs/cli.md's `docker run` command line, the image with NATS_URL given", async () => {
    const block = substituted(markedBlock('docs/cli.md', 'cli-from-the-image'), [
      // This engine has no bridge network: containers share the host's loopback.
      { from: 'docker run --rm ', to: 'docker run --rm --network host ', why: 'no bridge network on the test engine' },
      { from: /-e NATS_URL=\S+/, to: `-e NATS_URL=${nats.url}`, why: "the test's nats-server" },
    ]);
    const run = runBlock(block, {
      cwd: ROOT,
      env: {
        IMAGE,
        DOCKER_HOST: `unix://${required('IMAGE_TEST_SOCKET')}`,
        PATH: `${dirname(required('IMAGE_TEST_DOCKER'))}:${process.env['PATH']}`,
      },
    });
    const { code, stdout, output } = await run.done;
    assert.equal(code, 0, output);
    assertStatusPrinted(stdout);
  });

  it("stops with exit 0 on SIGTERM within the Deployment's grace period, after its shutdown delay", (t) => {
    const grace = deployment()['spec'].template.spec.terminationGracePeriodSeconds as number;
    const started = Date.now();
    // docker stop: SIGTERM, then SIGKILL (exit 137) once the grace period is over.
    assert.equal(docker(['stop', '-t', String(grace), name]).code, 0);
    t.diagnostic(`stopped ${Date.now() - started} ms after SIGTERM (grace period ${grace} s)`);
    assert.equal(docker(['inspect', '-f', '{{.State.ExitCode}}', name]).stdout.trim(), '0');
    const messages = docker(['logs', name])
      .stdout.split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as Obj)['msg']);
    assert.ok(messages.includes('shutting down: readiness off, finishing hook calls in flight'), messages.join('\n'));
    assert.equal(messages.at(-1), 'stopped');
  });
});
