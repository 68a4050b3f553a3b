// The real wadm (built by scripts/test-deps.sh from test/wadm) as a child process of a test,
// against a nats-server with JetStream. A missing binary is an error, never a skip: the
// end-to-end suite must not silently disappear.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { connect } from 'nats';
import { freePort } from './ports.js';
import { until } from './wait.js';

const DEFAULT_BIN = fileURLToPath(new URL('../wadm/target/release/wadm', import.meta.url));
const LOG_LIMIT = 256 * 1024;

export interface WadmProcess {
  /** wadm's log (stderr), most recent part. */
  output(): string;
  stop(): Promise<void>;
}

export function wadmBinary(env: NodeJS.ProcessEnv = process.env): string {
  const path = env['WADM_BIN'] || DEFAULT_BIN;
  try {
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    throw new Error(`the real wadm is not built at ${path}: run \`bash scripts/test-deps.sh\``);
  }
}

/** Starts wadm against `natsUrl` and resolves once its API answers. */
export async function startWadm(natsUrl: string, extraArgs: string[] = []): Promise<WadmProcess> {
  const adminPort = await freePort();
  const server = new URL(natsUrl).host;
  const child = spawn(
    wadmBinary(),
    // Memory streams unless the test asks otherwise (a NATS restart that must keep wadm's store).
    ['--nats-server', server, ...(extraArgs.includes('--stream-persistence') ? [] : ['--stream-persistence', 'memory']), '--http-admin', `127.0.0.1:${adminPort}`, ...extraArgs],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, RUST_LOG: process.env['WADM_RUST_LOG'] ?? 'info' } },
  );
  let log = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-LOG_LIMIT);
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  live.add(child);
  const wadm: WadmProcess = { output: () => log, stop: () => stop(child, exited).finally(() => live.delete(child)) };
  try {
    await Promise.race([untilApiAnswers(natsUrl), exited.then((code) => Promise.reject(new Error(`wadm exited with ${code}:\n${log}`)))]);
  } catch (err) {
    await wadm.stop();
    throw err;
  }
  return wadm;
}

async function untilApiAnswers(natsUrl: string, timeoutMs = 20_000): Promise<void> {
  const nc = await connect({ servers: natsUrl });
  try {
    let last: unknown;
    const answers = () => nc.request('wadm.api.default.model.get', '', { timeout: 500 }).then(() => true, (err: unknown) => ((last = err), false));
    await until(answers, { what: () => `wadm answers (last: ${String(last)})`, timeoutMs, intervalMs: 100 });
  } finally {
    await nc.close();
  }
}

async function stop(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

// A test run that dies must not leave wadm behind (exit handlers cannot wait: kill outright).
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});
