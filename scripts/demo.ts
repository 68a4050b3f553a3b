// `npm run demo [-- --keep]`: the whole path on one machine, from a fresh clone. It installs what is
// missing (the pinned nats-server and the real wadm, through scripts/test-deps.sh), builds the
// service, starts nats-server with JetStream, wadm, one simulated wasmCloud host and the built
// service as its own process, then drives examples/apps/hello-world.yaml through the Metacontroller
// emulator: apply → Ready → edit → new version Ready → revert → delete (finalized). With --keep
// everything stays up, with the URLs and a hook call to try, until Ctrl-C. Exit 0 when every step
// happened, 1 on an error (one line), 130 when interrupted before the end.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';
import { startLattice } from '../test/support/host-sim.js';
import { metacontrollerFor } from '../test/support/metacontroller.js';
import { startNatsServer } from '../test/support/nats-server.js';
import { hookRequest, type Resource } from '../test/support/resources.js';
import { startServiceProcess } from '../test/support/service-process.js';
import { startWadm } from '../test/support/wadm.js';
import { until } from '../test/support/wait.js';
import { buildService, DemoError, installNativeBinaries } from './demo/prepare.js';
import { runScenario } from './demo/scenario.js';
import { LiveTable } from './demo/table.js';

const APP_FILE = 'examples/apps/hello-world.yaml';
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const USAGE = 'usage: npm run demo [-- --keep]   (--keep: leave everything running until Ctrl-C)';

const started = Date.now();
const say = (line: string): void => void process.stdout.write(`${line}\n`);
const seconds = (): string => `${((Date.now() - started) / 1000).toFixed(1)}s`;

type Cleanup = () => unknown;

/** The application as `kubectl apply -f` would create it in the namespace `default`. */
function loadApplication(): Resource {
  const doc = yaml.load(readFileSync(join(ROOT, APP_FILE), 'utf8')) as Resource;
  return { ...doc, metadata: { ...doc.metadata, namespace: doc.metadata.namespace ?? 'default' } };
}

async function startEverything(cleanups: Cleanup[], interrupted: AbortSignal) {
  say('Installing what is missing (scripts/test-deps.sh --demo):');
  const binaries = await installNativeBinaries(say, interrupted);
  // Only these binaries: a nats-server on the PATH may be too old for wadm (Debian's is 2.9).
  process.env['NATS_SERVER_BIN'] = binaries.natsServer;
  process.env['WADM_BIN'] = binaries.wadm;
  await buildService(say, interrupted);

  const nats = await startNatsServer();
  cleanups.push(() => nats.dispose());
  say(`nats-server: ${nats.url}, JetStream on (${binaries.natsServer})`);
  const wadm = await startWadm(nats.url);
  cleanups.push(() => wadm.stop());
  say(`wadm: answering on ${nats.url} (${binaries.wadm})`);
  const lattice = await startLattice({ servers: nats.url, waitForWadm: true });
  cleanups.push(() => lattice.stop());
  say(`host: simulated wasmCloud host ${lattice.hosts[0]!.friendlyName} joined lattice "${lattice.lattice}"`);
  const service = await startServiceProcess({ NATS_URL: nats.url }, { built: true });
  cleanups.push(() => service.stop());
  await until(async () => (await service.ready()) === 200, { what: 'the service to connect to NATS' });
  say(`service: node dist/main.js, listening on ${service.url}, connected to NATS`);
  return { nats, lattice, service };
}

/** The hook call Metacontroller would make for the application, as a file for curl. */
function writeSyncBody(dir: string, app: Resource): string {
  const path = join(dir, 'sync.json');
  writeFileSync(path, `${JSON.stringify(hookRequest(app), null, 2)}\n`);
  return path;
}

function printTryIt(serviceUrl: string, natsUrl: string, syncBody: string): void {
  say('');
  say('Everything keeps running; Ctrl-C stops it all. Try:');
  say(`  hooks     POST ${serviceUrl}/sync   POST ${serviceUrl}/finalize`);
  say(`  probes    ${serviceUrl}/healthz   ${serviceUrl}/readyz`);
  say(`  metrics   ${serviceUrl}/metrics`);
  say(`  NATS      ${natsUrl} (wadm's API: wadm.api.default.model.*)`);
  say('  the sync hook, called as Metacontroller calls it (it deploys hello-world again and answers its status):');
  say(`  curl -s -H 'Content-Type: application/json' --data @${syncBody} ${serviceUrl}/sync`);
}

async function main(keep: boolean, cleanups: Cleanup[], interrupted: AbortSignal): Promise<void> {
  const { nats, lattice, service } = await startEverything(cleanups, interrupted);
  const mc = metacontrollerFor(service.url);
  const app = loadApplication();
  say('');
  await runScenario(
    { mc, lattice, table: new LiveTable(process.stdout), say, signal: interrupted },
    app as unknown as Parameters<typeof runScenario>[1],
    APP_FILE,
  );
  if (!keep) {
    say(`\nAll four steps done in ${seconds()}. To keep the service running and call it yourself: npm run demo -- --keep`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'wasmcloud-metacontroller-demo-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  printTryIt(service.url, nats.url, writeSyncBody(dir, app));
  await new Promise((resolve) => interrupted.addEventListener('abort', resolve, { once: true }));
}

/**
 * One line for the user. A DemoError says it all; anything else gets its first line, and the rest
 * (a child's output, the stack) goes to a file the line names.
 */
function describe(err: unknown): string {
  if (err instanceof DemoError) return err.message;
  const full = err instanceof Error ? (err.stack ?? err.message) : String(err);
  const first = (err instanceof Error ? err.message : full).split('\n')[0]!;
  const details = join(tmpdir(), 'wasmcloud-metacontroller-demo-error.log');
  writeFileSync(details, `${full}\n`);
  return `${first} (details: ${details})`;
}

async function run(): Promise<number> {
  const args = process.argv.slice(2);
  if (args.some((arg) => arg !== '--keep')) {
    process.stderr.write(`demo: unknown argument ${args.find((arg) => arg !== '--keep')}\n${USAGE}\n`);
    return 2;
  }
  const keep = args.includes('--keep');
  const cleanups: Cleanup[] = [];
  const interrupt = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    if (interrupt.signal.aborted) process.exit(130); // the second Ctrl-C: the exit hooks kill what is left
    say(`\n${signal === 'SIGINT' ? 'Ctrl-C' : signal}: stopping everything (Ctrl-C again to exit at once)...`);
    interrupt.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let code = 0;
  try {
    await main(keep, cleanups, interrupt.signal);
  } catch (err) {
    if (interrupt.signal.aborted) code = 130;
    else {
      process.stderr.write(`demo: ${describe(err)}\n`);
      code = 1;
    }
  }
  for (const cleanup of cleanups.reverse())
    await Promise.resolve()
      .then(cleanup)
      .catch(() => undefined);
  say(code === 0 ? `Stopped nats-server, wadm, the host and the service (${seconds()}).` : 'Stopped everything that was started.');
  return code;
}

process.exit(await run());
