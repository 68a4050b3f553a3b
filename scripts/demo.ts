// `npm run demo`: the whole path on one machine. A real nats-server and the real wadm 0.21.1, one
// simulated wasmCloud host, our service in-process, and the Metacontroller emulator syncing the
// hello-world WasmCloudApplication until it is Ready; then the resource is deleted (the finalize
// hook undeploys it) and everything is stopped. Exit 0 when Ready, 1 on timeout or error.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startLattice, type SimulatedLattice } from '../test/support/host-sim.js';
import { FakeMetacontroller, condition, type K8sObject } from '../test/support/metacontroller.js';
import { startNatsServer } from '../test/support/nats-server.js';
import { fixtureResource } from '../test/support/resources.js';
import { startService } from '../test/support/service.js';
import { startWadm } from '../test/support/wadm.js';

const TIMEOUT_MS = 60_000;
const ENV_FILE = fileURLToPath(new URL('../.cache/test-deps.env', import.meta.url));
const started = Date.now();

/** The binaries scripts/test-deps.sh built, unless the caller already chose others. */
function loadTestDepsEnv(): void {
  if (!existsSync(ENV_FILE)) return;
  for (const line of readFileSync(ENV_FILE, 'utf8').split('\n')) {
    const match = /^(NATS_SERVER_BIN|WADM_BIN)=(.+)$/.exec(line.trim());
    if (match && !process.env[match[1]!]) process.env[match[1]!] = match[2]!.replace(/^'(.*)'$/, '$1');
  }
}

function say(text: string): void {
  console.log(`[${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s] ${text}`);
}

function describeStatus(obj: K8sObject | undefined): string {
  const status = obj?.status ?? {};
  const ready = condition(obj, 'Ready');
  const readyText = ready ? `Ready=${ready.status} (${ready.reason ?? ''})` : 'Ready=<none>';
  return `phase=${String(status['phase'] ?? '<none>')} ${readyText} message=${JSON.stringify(status['message'] ?? '')}`;
}

/** Syncs like Metacontroller (again at once after a status write, else after the asked resync) and prints each change. */
async function syncUntilReady(mc: FakeMetacontroller, namespace: string, name: string): Promise<K8sObject | undefined> {
  let shown = '';
  while (Date.now() - started < TIMEOUT_MS) {
    const pass = await mc.reconcile(namespace, name);
    const obj = mc.get(namespace, name);
    const line = describeStatus(obj);
    if (line !== shown) say((shown = line));
    if (pass.error) say(`sync error: ${pass.error}`);
    if (condition(obj, 'Ready')?.status === 'True') return obj;
    const resyncMs = (pass.resyncAfterSeconds ?? pass.retryAfterSeconds ?? 0) * 1000;
    await new Promise((resolve) => setTimeout(resolve, Math.min(Math.max(resyncMs, 200), 1000)));
  }
  return undefined;
}

/** A `kubectl get wasmcloudapplications` line. */
function printTable(obj: K8sObject): void {
  const status = obj.status ?? {};
  const age = `${Math.round((Date.now() - Date.parse(obj.metadata.creationTimestamp ?? new Date().toISOString())) / 1000)}s`;
  const rows = [
    ['NAME', 'LATTICE', 'PHASE', 'READY', 'VERSION', 'AGE'],
    [obj.metadata.name, String(status['lattice'] ?? ''), String(status['phase'] ?? ''), condition(obj, 'Ready')?.status ?? '', String(status['version'] ?? ''), age],
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  for (const row of rows) console.log(row.map((cell, i) => cell.padEnd(widths[i]! + 3)).join('').trimEnd());
}

function printLattice(lattice: SimulatedLattice): void {
  const components = lattice.components().map((c) => `${c.id}×${c.maxInstances}`);
  const providers = lattice.providers().map((p) => p.id);
  say(`host ${lattice.hosts[0]?.friendlyName ?? '-'} runs components [${components.join(', ')}], providers [${providers.join(', ')}], ${lattice.links().length} link(s)`);
}

async function main(cleanups: (() => unknown)[]): Promise<number> {
  loadTestDepsEnv();
  const nats = await startNatsServer();
  cleanups.push(() => nats.dispose());
  say(`nats-server on ${nats.url}`);
  const wadm = await startWadm(nats.url);
  cleanups.push(() => wadm.stop());
  say('wadm 0.21.1 is answering');
  const lattice = await startLattice({ servers: nats.url, waitForWadm: true });
  cleanups.push(() => lattice.stop());
  say(`simulated host ${lattice.hosts[0]!.id} joined lattice "${lattice.lattice}"`);
  const service = await startService({ after: (fn) => void cleanups.push(fn) }, { NATS_URL: nats.url });
  await service.connected();
  say(`wasmcloud-metacontroller listening on ${service.url}`);

  const mc = new FakeMetacontroller({
    syncUrl: `${service.url}/sync`,
    finalizeUrl: `${service.url}/finalize`,
    resource: { apiVersion: 'core.wasmcloud.com/v1beta1', kind: 'WasmCloudApplication' },
  });
  const resource = fixtureResource('hello.yaml');
  const { namespace, name } = resource.metadata;
  mc.apply(resource as never);
  say(`applied WasmCloudApplication ${namespace}/${name}`);

  const ready = await syncUntilReady(mc, namespace, name);
  if (!ready) {
    say(`timed out after ${TIMEOUT_MS / 1000}s waiting for Ready=True`);
    return 1;
  }
  console.log();
  printTable(ready);
  console.log();
  printLattice(lattice);

  say(`deleting ${namespace}/${name}: the finalize hook undeploys it from wadm`);
  const gone = await mc.deleteAndFinalize(namespace, name, { honourResync: 'real', realResyncCapMs: 1000, maxPasses: 30 });
  say(gone.removed ? `finalized after ${gone.passes} pass(es)` : 'still not finalized');
  for (let i = 0; i < 50 && lattice.providers().length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
  printLattice(lattice);
  return 0;
}

const cleanups: (() => unknown)[] = [];
let code = 1;
try {
  code = await main(cleanups);
} catch (err) {
  console.error(err);
} finally {
  for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch((err: unknown) => console.error(err));
  say(code === 0 ? 'done, everything stopped' : 'failed, everything stopped');
}
process.exit(code);
