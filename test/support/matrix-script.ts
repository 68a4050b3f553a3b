// The version matrices (scripts/nats-matrix.sh, scripts/kube-matrix.sh) as their tests read them:
// a script's bash arrays, the README table that reports its last run, and the checks both scripts
// share (usage, `npm run`, .ci/run's order).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
export const read = (path: string) => readFileSync(resolve(ROOT, path), 'utf8');

/** The words of a bash array assignment `NAME=(...)` in a script, one or several lines. */
export function bashArray(script: string, name: string): string[] {
  const body = new RegExp(`^${name}=\\(([^)]*)\\)`, 'm').exec(read(script));
  assert.ok(body, `${script} has no ${name}=(...)`);
  return body[1]!.split(/\s+/).filter(Boolean);
}

/** Versions (v1.2.3) in release order. */
export const inVersionOrder = (versions: string[]) => [...versions].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));

/** A version's release line: v2.11.17 -> v2.11. */
export const releaseLine = (version: string) => version.split('.').slice(0, 2).join('.');

/** The rows of the table under README.md's heading whose first cell is a version, as arrays of cells. */
export function readmeVersionRows(heading: string): string[][] {
  const readme = read('README.md');
  const start = readme.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `README.md has no "${heading}" section`);
  const section = readme.slice(start + 1, readme.indexOf('\n## ', start + 1));
  return section
    .split('\n')
    .filter((line) => /^\| v\d/.test(line))
    .map((line) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
}

/** The script prints its usage with --help and refuses an unknown argument with exit 2. */
export function assertUsage(script: string): void {
  const help = spawnSync('bash', [script, '--help'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, new RegExp(`^Usage: ${script.replaceAll('.', '\\.')} `, 'm'));
  const wrong = spawnSync('bash', [script, '--everything'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(wrong.status, 2);
  assert.match(wrong.stderr, /unknown argument '--everything'/);
}

/** `npm run NAME` runs the script, and .ci/run runs it after npm test. */
export function assertRunByCi(name: string, script: string): void {
  const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
  assert.equal(scripts[name], `bash ${script}`);
  const ci = read('.ci/run').split('\n');
  const npmTest = ci.indexOf('npm test');
  assert.ok(npmTest >= 0, '.ci/run runs npm test');
  const run = ci.findIndex((line) => line.startsWith(`npm run ${name}`));
  assert.ok(run > npmTest, `.ci/run runs npm run ${name} after npm test`);
}
