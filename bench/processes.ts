// The bench's processes: the servers it measures, each pinned to a CPU of its own where the
// machine has two or more (taskset), and the bench itself (the load generator) pinned to another.
import { Agent, request } from 'node:http';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { basename, resolve } from 'node:path';
import type { HookRequest } from '../src/schema/hook.js';
import { memoryLimit, underLimit } from './memory-limit.js';

const ROOT = resolve(import.meta.dirname, '..');

/** Which CPU does what, or why nothing is pinned. */
export interface Pinning {
  loadGenerator?: number;
  servers?: number;
  note: string;
}

/**
 * With two CPUs or more: the bench process (autocannon, the paced client it spawns, nats-server
 * and the load responder it starts) on CPU 0, the measured servers on CPU 1, so that the load
 * generator never takes CPU time from the server it measures. Other processes on the machine
 * are not pinned and still share both CPUs.
 */
export function pinLoadGenerator(): Pinning {
  if (cpus().length < 2) return { note: 'not pinned: one CPU' };
  try {
    execFileSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
    return {
      loadGenerator: 0,
      servers: 1,
      note: 'load generator (bench process, paced client, nats-server, load responder) on CPU 0; each measured server on CPU 1, one at a time',
    };
  } catch {
    return { note: 'not pinned: taskset unavailable' };
  }
}

/**
 * Moves the bench process (all its threads) to this CPU, leaving the processes it started where
 * they are: the cold path keeps nats-server and wadm on the load generator's CPU and drives them
 * from the other one.
 */
export function moveSelfTo(cpu: number): void {
  execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(process.pid)], { stdio: 'ignore' });
}

export interface Server {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export interface ServeOptions {
  env?: Record<string, string>;
  /** Node flags before the script (the memory probe's --expose-gc and --import). */
  nodeArgs?: string[];
  pin?: Pinning;
}

/**
 * The Node.js that runs the measured servers (ceiling and ours alike); the bench itself and its
 * load stay on this one. BENCH_NODE=image: the image's Node 24 (scripts/image-node.sh fetches
 * it); BENCH_NODE=/path/to/node: that binary; unset: this process's Node.
 */
export const SERVER_NODE = serverNode(process.env['BENCH_NODE']);

/** The memory limit every measured server runs under: the pod's, where the machine allows. */
export const SERVER_MEMORY_LIMIT = memoryLimit();

const DOCKERFILE_LINES = readFileSync(resolve(ROOT, 'Dockerfile'), 'utf8').split('\n');

/**
 * Node flags ours runs with: BENCH_OURS_NODE_ARGS="--expose-gc --trace-gc", else the image
 * entrypoint's (as the image runs it).
 */
export const OURS_NODE_ARGS = process.env['BENCH_OURS_NODE_ARGS']?.split(' ').filter(Boolean) ?? imageEntrypointFlags();

/**
 * The V8 heap-sizing flags among ours' (`--max-semi-space-size=16`): the ceiling runs with them
 * too, so that a ratio compares the code, not two heap configurations.
 */
export const CEILING_NODE_ARGS = OURS_NODE_ARGS.filter((flag) => /^--(max|min)-(semi|old)-space-size=/.test(flag));

/**
 * Ours' environment in every part: BENCH_OURS_ENV="KEY=value …" (empty: none), else the image's
 * `ENV` (jemalloc preloaded) as this machine can honour it.
 */
export const OURS_ENV =
  process.env['BENCH_OURS_ENV'] === undefined ? onThisMachine(imageEnvironment()) : environmentOf(process.env['BENCH_OURS_ENV']);

function serverNode(setting: string | undefined): string {
  if (!setting) return process.execPath;
  if (setting !== 'image') return setting;
  return execFileSync('bash', [resolve(ROOT, 'scripts/image-node.sh')], { encoding: 'utf8' }).trim();
}

/** The flags between node and dist/main.js in the Dockerfile's ENTRYPOINT (its exec form). */
function imageEntrypointFlags(): string[] {
  const line = DOCKERFILE_LINES.find((l) => l.startsWith('ENTRYPOINT '));
  const entrypoint = line ? (JSON.parse(line.slice('ENTRYPOINT '.length)) as string[]) : [];
  const script = entrypoint.indexOf('dist/main.js');
  if (script < 1) throw new Error('the Dockerfile has no ENTRYPOINT ["…node", …flags, "dist/main.js"]');
  return entrypoint.slice(1, script);
}

/** The `ENV KEY=value …` pairs of the Dockerfile's final stage (no quoting: ours has none). */
function imageEnvironment(): Record<string, string> {
  const final = DOCKERFILE_LINES.slice(DOCKERFILE_LINES.findLastIndex((l) => l.startsWith('FROM ')));
  return environmentOf(
    final
      .filter((l) => l.startsWith('ENV '))
      .map((l) => l.slice('ENV '.length))
      .join(' '),
  );
}

/**
 * A library the image preloads from its own path is found here by file name (`ldconfig -p`); one
 * this machine lacks is left out, with a warning: ours then runs on glibc's malloc.
 */
function onThisMachine(env: Record<string, string>): Record<string, string> {
  const preload = env['LD_PRELOAD'];
  if (preload === undefined) return env;
  const { LD_PRELOAD: _, ...rest } = env;
  const found = preload
    .split(/[:\s]+/)
    .filter(Boolean)
    .flatMap((path) => {
      const here = existsSync(path) ? path : installedLibrary(basename(path));
      if (!here)
        console.warn(
          `bench: the image preloads ${basename(path)}, which this machine lacks (Debian: apt-get install libjemalloc2); ours runs without it`,
        );
      return here ? [here] : [];
    });
  return found.length > 0 ? { ...rest, LD_PRELOAD: found.join(':') } : rest;
}

function installedLibrary(name: string): string | undefined {
  try {
    const listing = execFileSync('/sbin/ldconfig', ['-p'], { encoding: 'utf8' });
    return listing
      .split('\n')
      .find((line) => line.trim().startsWith(`${name} `))
      ?.split(' => ')[1]
      ?.trim();
  } catch {
    return undefined;
  }
}

/** "A=1 B=2" as { A: '1', B: '2' }. */
function environmentOf(pairs: string): Record<string, string> {
  const split = pairs
    .split(/\s+/)
    .filter(Boolean)
    .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]);
  return Object.fromEntries(split);
}

/** Starts a server process; ours counts as up once /readyz says it reached NATS. */
export async function serve(script: string, options: ServeOptions = {}): Promise<Server> {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const node = [...(options.nodeArgs ?? []), script];
  const [pinned, pinnedArgs] =
    options.pin?.servers === undefined ? [SERVER_NODE, node] : ['taskset', ['-c', String(options.pin.servers), SERVER_NODE, ...node]];
  const { command, args, release } = underLimit(SERVER_MEMORY_LIMIT, pinned, pinnedArgs);
  const child: ChildProcess = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', SHUTDOWN_DELAY_MS: '0', ...options.env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise((r) => child.on('exit', r)).then(release);
  const url = `http://127.0.0.1:${port}`;
  const probe = script === 'dist/main.js' ? '/readyz' : '/';
  for (let i = 0; ; i++) {
    const status = await fetch(`${url}${probe}`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200 || (probe === '/' && status > 0)) break;
    if (i > 300 || child.exitCode !== null) throw new Error(`${script} did not start`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url, pid: child.pid!, stop: async () => void (child.kill('SIGTERM'), await exited) };
}

export async function post(url: string, body: string): Promise<unknown> {
  // A call never takes longer than Metacontroller's 10 s timeout; past 30 s something is stuck.
  const res = await fetch(`${url}/sync`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    signal: AbortSignal.timeout(30_000),
  });
  if (res.status !== 200) throw new Error(`/sync answered ${res.status}: ${await res.text()}`);
  return res.json();
}

/**
 * post() over node:http with kept-alive connections: where the load generator shares a CPU with what
 * it measures (the cold path), fetch's own cost per call (~4 ms of CPU here, as much as a new
 * application's hook call) would be charged to the service.
 */
export function lightPoster(url: string, connections: number): (body: string) => Promise<unknown> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const { hostname, port } = new URL(url);
  return (body) =>
    new Promise((resolve, reject) => {
      const req = request(
        {
          host: hostname,
          port,
          path: '/sync',
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          timeout: 30_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () =>
            res.statusCode === 200
              ? resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')))
              : reject(new Error(`/sync answered ${res.statusCode}`)),
          );
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error('/sync took over 30 s')));
      req.on('error', reject);
      req.end(body);
    });
}

/** The sum of a metric's samples whose line starts with `name` (labels included in the prefix). */
export async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(name))
    .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
}

export async function pool<T>(items: T[], width: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

/** Feeds the returned status back, as Metacontroller does, until the answer stops changing. */
export async function settle(url: string, request: HookRequest): Promise<string> {
  let body = JSON.stringify(request);
  for (let i = 0; i < 100; i++) {
    const answer = (await post(url, body)) as { status: Record<string, unknown>; resyncAfterSeconds?: number };
    const next = JSON.stringify({ ...request, parent: { ...request.parent, status: { ...answer.status, observedGeneration: 1 } } });
    if (next === body && answer.resyncAfterSeconds === undefined) return body;
    body = next;
    request = JSON.parse(body) as HookRequest;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the application did not settle');
}

export async function etagOf(url: string, body: string): Promise<string> {
  const res = await fetch(`${url}/sync`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  await res.arrayBuffer();
  return res.headers.get('etag') ?? '';
}
