// Native server processes of the tests (nats-server, etcd, kube-apiserver): the binary scripts/test-deps.sh pinned,
// the recent log, readiness awaited (a deadline only bounds a hung start), a stop that waits for the exit, and
// cleanup, so that a test run that exits or is stopped with a signal leaves no process and no temp dir behind.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, rmSync } from 'node:fs';
import { until } from './wait.js';

const LOG_LIMIT = 128 * 1024;
const STOP_TIMEOUT_MS = 10_000;

export interface ServerProcess {
  readonly name: string;
  /** The process's recent stderr and stdout. */
  output(): string;
  /** Resolves with the exit code once the process has exited by itself or by stop(). */
  readonly exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after 10 s; resolves once the process has exited. Idempotent. */
  stop(): Promise<void>;
}

/** `$<variable>` as written by scripts/test-deps.sh; a missing binary is an error, never a skip. */
export function binaryFrom(variable: string, env: NodeJS.ProcessEnv = process.env): string {
  const path = env[variable];
  if (!path) throw new Error(`${variable} is not set: run \`bash scripts/test-deps.sh\` and source .cache/test-deps.env`);
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new Error(`${variable}=${path} is not an executable file: run \`bash scripts/test-deps.sh\``);
  }
  return path;
}

export function startProcess(name: string, binary: string, args: string[], env: NodeJS.ProcessEnv = process.env): ServerProcess {
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  let log = '';
  const append = (chunk: Buffer): void => {
    log = (log + chunk.toString()).slice(-LOG_LIMIT);
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exited = new Promise<number | null>((resolve) => {
    child.on('exit', (code) => resolve(code));
    child.on('error', (error) => {
      log += `\nspawn error: ${error.message}`;
      resolve(null);
    });
  });
  live.add(child);
  void exited.then(() => live.delete(child));
  return { name, output: () => log, exited, stop: () => stop(child, exited) };
}

async function stop(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  }
}

/** Polls `ready` until it holds; fails at once when the process exits, and after `timeoutMs` with its log. */
export async function untilReady(process: ServerProcess, ready: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  let exitCode: number | null | undefined;
  void process.exited.then((code) => {
    exitCode = code;
  });
  const check = async () => {
    if (exitCode !== undefined) throw new Error(`${process.name} exited with ${exitCode}:\n${process.output()}`);
    return ready().catch(() => false);
  };
  await until(check, { what: () => `${process.name} ready:\n${process.output()}`, timeoutMs, intervalMs: 50 });
}

/** A temp dir removed at exit if the test has not removed it by then. */
export function removedAtExit(dir: string): () => void {
  liveDirs.add(dir);
  return () => {
    rmSync(dir, { recursive: true, force: true });
    liveDirs.delete(dir);
  };
}

// Exit handlers cannot wait: kill outright. A signal's default action skips 'exit', so an unhandled signal cleans
// up and is raised again, to keep its effect; a program that handles the signal itself (`npm run demo` on Ctrl-C)
// stops its servers in order, and 'exit' still catches what it leaves.
const live = new Set<ChildProcess>();
const liveDirs = new Set<string>();
function cleanUp(): void {
  for (const child of live) child.kill('SIGKILL');
  for (const dir of liveDirs) rmSync(dir, { recursive: true, force: true });
}
process.on('exit', cleanUp);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    if (process.listenerCount(signal) > 0) return;
    cleanUp();
    process.kill(process.pid, signal);
  });
}
