// What the demo needs before it can start anything: the pinned nats-server and the real wadm
// (scripts/test-deps.sh --demo installs or builds what is missing, its progress shown as it goes)
// and an up-to-date build of the service in dist/.
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { BUILT_MAIN } from '../../test/support/service-process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TEST_DEPS = join(ROOT, 'scripts/test-deps.sh');
const BUILD = join(ROOT, 'scripts/build.mjs');
/** What `npm run build` reads: a change to any of them makes dist/ stale. */
const BUILD_INPUTS = ['src', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/build.mjs'];

/** An expected failure: the demo prints its message as one line, without a stack trace. */
export class DemoError extends Error {}

export interface NativeBinaries {
  natsServer: string;
  wadm: string;
}

/**
 * Starts a command in a process group of its own, so that an abort (Ctrl-C) stops all of it
 * (bash and the cargo or go it runs), not only its first process.
 */
function startGroup(
  command: string,
  args: string[],
  stdio: StdioOptions,
  signal: AbortSignal,
): { child: ChildProcess; exited: Promise<number | null> } {
  const child = spawn(command, args, { cwd: ROOT, stdio, detached: true });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let running = true;
  const stop = (): void => {
    if (!running || child.pid === undefined) return;
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      // the group is gone already
    }
  };
  signal.addEventListener('abort', stop, { once: true });
  process.on('exit', stop); // a second Ctrl-C exits at once: leave no cargo behind
  void exited.then(() => {
    running = false;
    signal.removeEventListener('abort', stop);
    process.off('exit', stop);
  });
  return { child, exited };
}

/**
 * Runs `scripts/test-deps.sh --demo`: its lines are shown indented as they come (cargo's progress
 * goes to the terminal directly), and the two paths it prints last are returned.
 */
export async function installNativeBinaries(say: (line: string) => void, signal: AbortSignal): Promise<NativeBinaries> {
  const { child, exited } = startGroup('bash', [TEST_DEPS, '--demo'], ['ignore', 'pipe', 'inherit'], signal);
  const paths: Record<string, string> = {};
  for await (const line of createInterface({ input: child.stdout! })) {
    const path = /^(NATS_SERVER_BIN|WADM_BIN)=(.+)$/.exec(line);
    if (path) paths[path[1]!] = path[2]!;
    else say(`  ${line}`);
  }
  const code = await exited;
  if (code !== 0 || !paths['NATS_SERVER_BIN'] || !paths['WADM_BIN']) {
    throw new DemoError(`scripts/test-deps.sh --demo failed (exit ${code}); its message is above`);
  }
  return { natsServer: paths['NATS_SERVER_BIN'], wadm: paths['WADM_BIN'] };
}

function newestChange(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((entry) => newestChange(join(path, entry))));
}

/** Why dist/ must be built, or undefined when it is newer than every build input. */
export function buildNeeded(): string | undefined {
  if (!existsSync(BUILT_MAIN)) return 'dist/main.js does not exist';
  const built = statSync(BUILT_MAIN).mtimeMs;
  const stale = BUILD_INPUTS.find((input) => newestChange(join(ROOT, input)) > built);
  return stale === undefined ? undefined : `${stale} changed since the last build`;
}

/** `npm run build` (tsc, then the bundle), with its output shown, when dist/ is missing or stale. */
export async function buildService(say: (line: string) => void, signal: AbortSignal): Promise<void> {
  const reason = buildNeeded();
  if (reason === undefined) {
    say('service: dist/ is up to date');
    return;
  }
  const started = Date.now();
  say(`service: building dist/ (${reason})...`);
  const code = await startGroup(process.execPath, [BUILD], ['ignore', 'inherit', 'inherit'], signal).exited;
  if (code !== 0) throw new DemoError(`the build failed (exit code ${code}); its errors are above`);
  say(`service: built dist/ in ${((Date.now() - started) / 1000).toFixed(1)}s`);
}
