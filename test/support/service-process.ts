// The service as its own process, as a platform team runs it: from the sources through tsx
// (`src/main.ts`, the default) or the build (`dist/main.js`, as `npm start` and the image run it),
// on a free loopback port, its JSON log lines parsed, its /metrics readable. Several can run side
// by side, like the replicas of the Deployment.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { freePort } from './ports.js';
import { allowAllPolicy } from './service.js';
import { until } from './wait.js';

const SOURCE_MAIN = resolve(import.meta.dirname, '../../src/main.ts');
/** What `npm run build` writes; run by plain node, without tsx. */
export const BUILT_MAIN = resolve(import.meta.dirname, '../../dist/main.js');
/** The node flags of `npm start` in `root` (and of the image's ENTRYPOINT: kubernetes.test.ts keeps them equal). */
const startFlags = (root: string): string[] =>
  (JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start
    .split(' ')
    .filter((word) => word.startsWith('--'));

export interface ServiceProcess {
  url: string;
  logs: Record<string, unknown>[];
  /** The value of one metric series (0 when absent), e.g. `wadm_writes_total{operation="deploy"}`. */
  metric(series: string): Promise<number>;
  ready(): Promise<number>;
  stop(): Promise<void>;
}

export interface ServiceProcessOptions {
  /** Run `BUILT_MAIN` with plain node instead of the sources through tsx. */
  built?: boolean;
  /** Listen on this port (replicas that name each other in PEERS need theirs before they start). */
  port?: number;
  /** Run another build of the service, as `npm start` there does: `root`'s dist/main.js with its package.json's flags
   *  (an earlier release, test/support/releases.ts). */
  root?: string;
}

export async function startServiceProcess(env: Record<string, string>, options: ServiceProcessOptions = {}): Promise<ServiceProcess> {
  const port = options.port ?? (await freePort());
  // Built: with the flags the image runs it with (--expose-gc lets the service give memory back).
  const built = options.root ?? (options.built ? resolve(BUILT_MAIN, '../..') : undefined);
  const args = built ? [...startFlags(built), join(built, 'dist/main.js')] : ['--import', 'tsx', SOURCE_MAIN];
  const child = spawn(process.execPath, args, {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      LATTICE_POLICY_FILE: allowAllPolicy(),
      SHUTDOWN_DELAY_MS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  let pending = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString()).split('\n');
    pending = lines.pop()!;
    for (const line of lines.filter(Boolean)) logs.push(JSON.parse(line) as Record<string, unknown>);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  live.add(child);
  void exited.then(() => live.delete(child));
  // Wait for the process to say it listens: a loaded machine starts slowly.
  await until(
    () => {
      if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}: ${stderr}`);
      return logs.some((l) => String(l['msg']).startsWith('Server listening'));
    },
    { what: () => `the service listens:\n${stderr}`, timeoutMs: 60_000 },
  );
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    logs,
    async metric(series) {
      const text = await (await fetch(`${url}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith(`wasmcloud_metacontroller_${series} `));
      return line ? Number(line.split(' ')[1]) : 0;
    },
    ready: async () => (await fetch(`${url}/readyz`)).status,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

// A caller that exits without stop() (a second Ctrl-C, a crash) must not leave the service running.
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});
