// Real nats-server processes for tests: a free port, a fresh JetStream store, readiness checks,
// stop/restart on the same port and store (tests kill NATS mid-scenario), and an exit hook so a
// crashed or interrupted test run leaves no server behind.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';
import { connect } from 'nats';
import { freePort } from './ports.js';
import { until } from './wait.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;
const LOG_LIMIT = 64 * 1024;

export interface NatsServerOptions {
  /** `-js` with a store in a fresh temp dir (default true). */
  jetstream?: boolean;
  /** Appended after our own flags. */
  extraArgs?: string[];
  /** Passed with `-c`; our `-a`/`-p`/`-sd` flags override the file. */
  configFile?: string;
}

export interface NatsServer {
  readonly url: string;
  readonly port: number;
  readonly storeDir: string;
  /** The current process id (changes on restart); undefined while stopped. */
  readonly pid: number | undefined;
  /** SIGTERM, then SIGKILL after 5 s; resolves once the process has exited. Idempotent. */
  stop(): Promise<void>;
  /** Starts again on the same port and store dir (stopping first if running). */
  restart(): Promise<void>;
  /** stop() and delete the store dir. */
  dispose(): Promise<void>;
  /** The server's recent log output (stderr and stdout). */
  output(): string;
}

/**
 * `$NATS_SERVER_BIN`, else `<repo>/.cache/bin/nats-server` (installed by `bash scripts/test-deps.sh`),
 * else `nats-server` on the PATH.
 */
export function natsServerBinary(env: NodeJS.ProcessEnv = process.env, repoRoot = REPO_ROOT): string {
  const fromEnv = env['NATS_SERVER_BIN'];
  if (fromEnv) {
    if (!isExecutable(fromEnv)) throw new Error(`NATS_SERVER_BIN=${fromEnv} is not an executable file`);
    return fromEnv;
  }
  const candidates = [
    join(repoRoot, '.cache', 'bin', 'nats-server'),
    ...(env['PATH'] ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, 'nats-server')),
  ];
  const found = candidates.find(isExecutable);
  if (found) return found;
  throw new Error(
    'nats-server not found: set NATS_SERVER_BIN, or run `bash scripts/test-deps.sh` to install it into .cache/bin, ' +
      'or put nats-server (>= 2.10) on the PATH',
  );
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export async function startNatsServer(options: NatsServerOptions = {}): Promise<NatsServer> {
  const binary = natsServerBinary();
  const storeDir = mkdtempSync(join(tmpdir(), 'nats-test-'));
  liveDirs.add(storeDir);
  // A port picked by the OS may be taken again before nats-server binds it: try a few.
  for (let attempt = 1; ; attempt++) {
    const server = new ServerProcess(binary, await freePort(), storeDir, options);
    try {
      await server.start();
      return server;
    } catch (e) {
      if (!(e instanceof PortInUse) || attempt === 5) {
        await server.dispose();
        throw e;
      }
    }
  }
}

/** node:test helper: a server that is disposed after the test (or suite hook) `t`. */
export async function withNatsServer(t: Pick<TestContext, 'after'>, options?: NatsServerOptions): Promise<NatsServer> {
  const server = await startNatsServer(options);
  t.after(() => server.dispose());
  return server;
}

class PortInUse extends Error {}

class ServerProcess implements NatsServer {
  readonly url: string;
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private log = '';

  constructor(
    private readonly binary: string,
    readonly port: number,
    readonly storeDir: string,
    private readonly options: NatsServerOptions,
  ) {
    this.url = `nats://127.0.0.1:${port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  output(): string {
    return this.log;
  }

  async start(): Promise<void> {
    const child = spawn(this.binary, this.args(), { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    liveChildren.add(child);
    installExitHook();
    const append = (chunk: Buffer): void => {
      this.log = (this.log + chunk.toString()).slice(-LOG_LIMIT);
    };
    child.stdout?.on('data', append);
    child.stderr?.on('data', append);
    this.exited = new Promise((resolve) => {
      child.once('exit', () => {
        liveChildren.delete(child);
        if (this.child === child) this.child = undefined;
        resolve();
      });
      child.once('error', (e) => {
        this.log += `\nspawn error: ${e.message}`;
        liveChildren.delete(child);
        if (this.child === child) this.child = undefined;
        resolve();
      });
    });
    try {
      await this.waitUntilReady(child);
    } catch (e) {
      await this.stop();
      if (/address already in use/i.test(this.log)) throw new PortInUse(this.describe('port in use'));
      throw e;
    }
  }

  private args(): string[] {
    const { jetstream = true, extraArgs = [], configFile } = this.options;
    return [
      ...(configFile ? ['-c', configFile] : []),
      '-a', '127.0.0.1', '-p', String(this.port),
      ...(jetstream ? ['-js', '-sd', this.storeDir] : []),
      ...extraArgs,
    ];
  }

  private async waitUntilReady(child: ChildProcess): Promise<void> {
    let gone = false;
    void this.exited.then(() => (gone = true));
    const check = this.options.jetstream === false ? () => portOpen(this.port) : () => jetStreamReady(this.url);
    const ready = async () => {
      if (gone || child.exitCode !== null) throw new Error(this.describe('nats-server exited during startup'));
      return check();
    };
    await until(ready, { what: () => this.describe('nats-server ready'), timeoutMs: START_TIMEOUT_MS, intervalMs: 25 });
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child === undefined) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await this.exited;
    clearTimeout(timer);
  }

  async restart(): Promise<void> {
    await this.stop();
    this.log += '\n--- restart ---\n';
    await this.start();
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.storeDir, { recursive: true, force: true });
    liveDirs.delete(this.storeDir);
  }

  /** The problem, the command line, and the server's output: its first lines and its tail. */
  private describe(problem: string): string {
    const lines = this.log.trimEnd().split('\n');
    const shown = lines.length <= 40 ? lines : [...lines.slice(0, 5), '[...]', ...lines.slice(-30)];
    return `${problem} (${this.binary} ${this.args().join(' ')})\n--- nats-server output ---\n${shown.join('\n')}`;
  }
}

/** With JetStream, "ready" means a client can connect and reach the JetStream API. */
async function jetStreamReady(url: string): Promise<boolean> {
  if (!(await portOpen(Number(new URL(url).port)))) return false;
  try {
    const nc = await connect({ servers: url, reconnect: false, timeout: 1_000 });
    try {
      await nc.jetstreamManager({ timeout: 1_000 }); // fetches the account info: fails until JetStream is up
      return true;
    } finally {
      await nc.close();
    }
  } catch {
    return false;
  }
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

// ---- leftovers -----------------------------------------------------------------------------------

const liveChildren = new Set<ChildProcess>();
const liveDirs = new Set<string>();
let hookInstalled = false;

/**
 * On exit kill every server still running and remove its store; on SIGINT/SIGTERM/SIGHUP too, unless
 * the program handles the signal itself (it then stops its servers in order, e.g. `npm run demo` on
 * Ctrl-C, and the exit hook still catches what it leaves).
 */
function installExitHook(): void {
  if (hookInstalled) return;
  hookInstalled = true;
  process.on('exit', killLeftovers);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      if (process.listenerCount(signal) > 0) return;
      killLeftovers();
      process.kill(process.pid, signal); // re-raised, to keep the signal's default effect (exit)
    });
  }
}

function killLeftovers(): void {
  for (const child of liveChildren) child.kill('SIGKILL');
  liveChildren.clear();
  for (const dir of liveDirs) rmSync(dir, { recursive: true, force: true });
  liveDirs.clear();
}
