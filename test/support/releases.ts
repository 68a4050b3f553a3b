// Releases for the upgrade tests. The previous one: its shipped install.yaml (and chart, if it had
// one) from test/fixtures/releases/<version>/ (scripts/release-fixture.sh made them), and its hook
// service built from its commit into .cache/releases/<version> on first use. The new one: the
// release command's output directory (`RELEASE_DIR`: install.yaml and the packaged chart), or the
// same two things built from the working tree.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { binaryFrom, removedAtExit } from './processes.js';

const ROOT = resolve(import.meta.dirname, '../..');
const CACHE = resolve(ROOT, '.cache/releases');

export interface PreviousRelease {
  version: string;
  commit: string;
  /** Its install.yaml, as `kubectl kustomize manifests/` of its commit rendered it. */
  installYaml: string;
  /** Its chart directory, or undefined: a release that shipped no chart. */
  chart: string | undefined;
}

export function previousRelease(version: string): PreviousRelease {
  const dir = resolve(ROOT, 'test/fixtures/releases', version);
  const { commit } = JSON.parse(readFileSync(join(dir, 'release.json'), 'utf8')) as { commit: string };
  const chart = join(dir, 'chart');
  return { version, commit, installYaml: join(dir, 'install.yaml'), chart: existsSync(chart) ? chart : undefined };
}

export interface NewRelease {
  installYaml: string;
  chart: string;
}

/** `RELEASE_DIR`'s install.yaml and wasmcloud-metacontroller-*.tgz, else both built from the working tree into a temp dir. */
export function newRelease(): NewRelease {
  const given = process.env['RELEASE_DIR'];
  if (given) return releaseIn(resolve(given));
  const dir = mkdtempSync(join(tmpdir(), 'release-'));
  removedAtExit(dir);
  writeFileSync(join(dir, 'install.yaml'), run(binaryFrom('KUBECTL_BIN'), ['kustomize', 'manifests'], ROOT));
  run(binaryFrom('HELM_BIN'), ['package', 'charts/wasmcloud-metacontroller', '--destination', dir], ROOT);
  return releaseIn(dir);
}

function releaseIn(dir: string): NewRelease {
  const charts = readdirSync(dir).filter((f) => /^wasmcloud-metacontroller-.+\.tgz$/.test(f));
  if (!existsSync(join(dir, 'install.yaml')) || charts.length !== 1)
    throw new Error(`${dir} must hold install.yaml and one wasmcloud-metacontroller-<version>.tgz, has: ${readdirSync(dir).join(', ')}`);
  return { installYaml: join(dir, 'install.yaml'), chart: join(dir, charts[0]!) };
}

/**
 * The release's hook service, built as its own sources built it (`npm ci` with its lockfile, then
 * its `npm run build`) into .cache/releases/<version>; returns that directory (dist/ and package.json
 * in it). Built once: later calls find the stamp naming the commit.
 */
export function buildPreviousService(release: PreviousRelease): string {
  const dir = join(CACHE, release.version);
  const stamp = join(dir, '.built-from');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === release.commit) return dir;
  if (spawnSync('git', ['cat-file', '-e', `${release.commit}^{commit}`], { cwd: ROOT }).status !== 0)
    throw new Error(
      `commit ${release.commit} (release ${release.version}) is not in this clone, so its service cannot be built: ` +
        'run `git fetch --unshallow` (a shallow clone has only the newest commits)',
    );
  mkdirSync(CACHE, { recursive: true });
  // Built beside the cache and renamed into place, so an interrupted build is never taken for a finished one.
  const work = mkdtempSync(join(CACHE, `${release.version}.building-`));
  try {
    run('bash', ['-c', `git archive ${release.commit} | tar -x -C "${work}"`], ROOT);
    run('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], work);
    run('npm', ['run', 'build'], work);
    writeFileSync(join(work, '.built-from'), `${release.commit}\n`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(work, dir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return dir;
}

function run(bin: string, args: string[], cwd: string): string {
  const result = spawnSync(bin, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error || result.status !== 0)
    throw new Error(`${bin} ${args.join(' ')} (in ${cwd}) failed: ${result.error?.message ?? ''}\n${result.stdout}${result.stderr}`);
  return result.stdout;
}
