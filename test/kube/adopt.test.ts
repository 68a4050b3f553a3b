// Adopting what `wash app deploy` left running, as docs/adopt.md shows it, command for command:
// the page's console block is run in bash (kubectl against the real API server, the CLI against the
// real wadm) and what each command prints is compared with the page. Meanwhile the Metacontroller
// emulator calls the service through the real API server, and every status it writes is kept: no
// answer may carry a Conflict reason, and the simulated host must never be told to stop anything.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { connect, headers, type NatsConnection } from 'nats';
import yaml from 'js-yaml';
import { PLURAL } from '../../src/schema/crd.js';
import { startKubeCluster, type KubeCluster } from '../support/kube/cluster.js';
import { installCrd } from '../support/kube/crd.js';
import { startLattice, type SimulatedLattice } from '../support/host-sim.js';
import { metacontrollerFor, type K8sObject } from '../support/metacontroller.js';
import { KubeParentStore } from '../support/metacontroller/kube-parent-store.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { CleanupStack, startService, type RunningService } from '../support/service.js';
import { startWadm, type WadmProcess } from '../support/wadm.js';
import { fixtureText } from '../support/fixtures.js';
import { sleep, until } from '../support/wait.js';

const ROOT = resolve(import.meta.dirname, '../..');
const PAGE = 'docs/adopt.md';
const LATTICE = 'default';
const NAMESPACE = 'apps';
const NAME = 'hello-world';
const RESOURCE = { apiVersion: 'core.wasmcloud.com/v1beta1', kind: 'WasmCloudApplication', plural: PLURAL };
/** The one line of the page this test replaces: there is no kubelet here to exec into a pod. */
const EXEC_FUNCTION = /^wasmcloud-metacontroller\(\) \{ kubectl exec .* -- \/nodejs\/bin\/node dist\/main\.js "\$@"; \}$/;

let kube: KubeCluster;
let nats: NatsServer;
let wadm: WadmProcess;
let sim: SimulatedLattice;
let nc: NatsConnection;
let running: RunningService;
const cleanups = new CleanupStack();

before(async () => {
  kube = await startKubeCluster();
  await installCrd(kube);
  await kube.kubectlOk(['create', 'namespace', NAMESPACE]);
  nats = await startNatsServer();
  wadm = await startWadm(nats.url);
  sim = await startLattice({ servers: nats.url, lattice: LATTICE, hosts: [{ labels: {} }], heartbeatMs: 500, waitForWadm: true });
  nc = await connect({ servers: nats.url });
  running = await startService(cleanups, { NATS_URL: nats.url, DEFAULT_LATTICE: LATTICE }, { deployGraceMs: 2000 });
  await running.connected();
});
after(async () => {
  await cleanups.run();
  await nc?.close();
  await sim?.stop();
  await wadm?.stop();
  await nats?.dispose();
  await kube?.stop();
});

interface Step {
  command: string;
  printed: string;
}

/** The page's console block: each `$ ` line and what it prints. */
function documentedSteps(): Step[] {
  const page = readFileSync(resolve(ROOT, PAGE), 'utf8');
  const block = page.split('```console\n')[1]!.split('```')[0]!;
  const steps: Step[] = [];
  for (const line of block.trimEnd().split('\n')) {
    if (line.startsWith('$ ')) steps.push({ command: line.slice(2), printed: '' });
    else steps.at(-1)!.printed += `${line}\n`;
  }
  return steps;
}

/** Runs the steps in one bash, in `dir`; resolves with what each printed (stdout and stderr). */
function runSteps(steps: Step[], dir: string): Promise<string[]> {
  const marker = '@@step-done';
  // From the temporary directory the page's commands run in, tsx is found by its full path.
  const cli = `${process.execPath} --import ${import.meta.resolve('tsx')} ${resolve(ROOT, 'src/main.ts')}`;
  const script = steps
    .map(({ command }) => {
      // Grouped, so that a command's own redirection of stdout keeps its stderr out of the file.
      if (!EXEC_FUNCTION.test(command)) return `{ ${command}; } 2>&1; echo "${marker} $?"`;
      return `wasmcloud-metacontroller() { ${cli} "$@"; }; echo "${marker} 0"`;
    })
    .join('\n');
  const kubectlDir = dirname(process.env['KUBECTL_BIN']!);
  return new Promise((done, fail) => {
    const bash = spawn('bash', ['-c', script], {
      cwd: dir,
      env: {
        PATH: `${kubectlDir}:${process.env['PATH']}`,
        HOME: dir,
        KUBECONFIG: kube.kubeconfig,
        NATS_URL: nats.url,
        DEFAULT_LATTICE: LATTICE,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    bash.stdout.on('data', (d: Buffer) => (out += d.toString()));
    bash.stderr.on('data', (d: Buffer) => (out += d.toString()));
    bash.on('error', fail);
    bash.on('close', () => {
      const printed = out.split(new RegExp(`${marker} (\\d+)\\n`));
      const results: string[] = [];
      for (let i = 0; i + 1 < printed.length; i += 2) {
        if (printed[i + 1] !== '0') {
          fail(new Error(`"${steps[results.length]!.command}" exits ${printed[i + 1]}; it printed:\n${printed[i]}`));
          return;
        }
        results.push(printed[i]!);
      }
      done(results);
    });
  });
}

/** What `wash app deploy hello.yaml` does: put the manifest, then deploy the version it names. */
async function washAppDeploy(manifest: string): Promise<void> {
  const h = headers();
  h.set('Content-Type', 'application/yaml');
  const put = await nc.request(`wadm.api.${LATTICE}.model.put`, manifest, { timeout: 3000, headers: h });
  assert.equal((JSON.parse(put.string()) as { result: string }).result, 'created');
  const deploy = await nc.request(`wadm.api.${LATTICE}.model.deploy.${NAME}`, '{}', { timeout: 3000 });
  assert.equal((JSON.parse(deploy.string()) as { result: string }).result, 'acknowledged');
}

const conditionsOf = (obj: K8sObject | undefined) =>
  (obj?.status as { conditions?: { type: string; status: string; reason: string }[] } | undefined)?.conditions ?? [];

describe('adopting an application deployed with wash, as docs/adopt.md shows', () => {
  it('takes it over in one apply: no Conflict in any status, nothing stopped, the resource its owner', async () => {
    const pinned = yaml.load(fixtureText('hello.yaml')) as { metadata: { annotations: Record<string, string> } };
    pinned.metadata.annotations['version'] = 'v1.0.0';
    await washAppDeploy(yaml.dump(pinned));
    await until(() => sim.components().length > 0 && sim.providers().length > 0, { timeoutMs: 60_000, what: 'wash deploy runs' });
    const washRan = { components: sim.components(), providers: sim.providers() };
    const requestsBefore = sim.requests().length;

    const dir = mkdtempSync(join(tmpdir(), 'adopt-'));
    writeFileSync(join(dir, 'hello.yaml'), yaml.dump(pinned));
    const steps = documentedSteps();
    const written: K8sObject[] = [];
    let finished = false;
    const mc = metacontrollerFor(running.url, { api: new KubeParentStore(kube.client, RESOURCE), resource: RESOURCE });
    // Metacontroller's side, while the page's commands run: call the hook as watch events and
    // resyncs would, and keep every status it writes.
    const emulator = (async () => {
      while (!finished) {
        const pass = await mc.reconcile(NAMESPACE, NAME);
        if (pass.statusChanged) written.push(mc.get(NAMESPACE, NAME)!);
        await sleep(100);
      }
    })();
    let printed: string[];
    try {
      printed = await runSteps(steps, dir);
    } finally {
      finished = true;
      await emulator;
    }

    // The page and what the commands print agree (the adopted version is named by its content).
    const version = /^hello-world\s+(sha-[0-9a-f]{16})\s/m.exec(printed.at(-1)!)?.[1];
    assert.ok(version, `the last list names a sha- version:\n${printed.at(-1)}`);
    steps.forEach((step, i) => {
      if (EXEC_FUNCTION.test(step.command)) return;
      assert.equal(printed[i], step.printed.replaceAll('sha-0000000000000000', version), `output of: ${step.command}`);
    });

    const reasons = written.flatMap((obj) => conditionsOf(obj).map((c) => c.reason));
    assert.ok(written.length > 0, 'the emulator wrote statuses');
    assert.deepEqual(
      reasons.filter((reason) => /Conflict|Collision/.test(reason)),
      [],
      `no answer reports a conflict: ${reasons.join(', ')}`,
    );
    const ready = conditionsOf(written.at(-1)).find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'True');

    // What runs kept running: the host was never told to stop or scale anything down.
    const stops = sim
      .requests()
      .slice(requestsBefore)
      .filter(
        (r) =>
          r.operation.startsWith('provider.stop') ||
          (r.operation.startsWith('component.scale') && Number((r.body as { count?: unknown })?.['count'] ?? 0) === 0),
      );
    assert.deepEqual(stops, []);
    assert.deepEqual(
      sim.components().map(({ id, imageRef, maxInstances }) => ({ id, imageRef, maxInstances })),
      washRan.components.map(({ id, imageRef, maxInstances }) => ({ id, imageRef, maxInstances })),
    );
    assert.deepEqual(
      sim.providers().map(({ id }) => id),
      washRan.providers.map(({ id }) => id),
    );

    // wadm keeps what wash put as history; the version the hook put carries the resource as owner.
    const versions = await nc.request(`wadm.api.${LATTICE}.model.versions.${NAME}`, '', { timeout: 3000 });
    assert.deepEqual((JSON.parse(versions.string()) as { versions: unknown[] }).versions, [
      { version: 'v1.0.0', deployed: false },
      { version, deployed: true },
    ]);
  });
});
