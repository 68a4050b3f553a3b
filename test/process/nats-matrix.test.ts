// The nats-server compatibility matrix (scripts/nats-matrix.sh) and what the docs say of it: the
// README's table names exactly the versions tested (the matrix's and the pinned one of npm test),
// every file of the tier exists and starts the real servers, and CI and npm run it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(resolve(ROOT, path), 'utf8');
const SCRIPT = 'scripts/nats-matrix.sh';
const script = read(SCRIPT);

/** The words of a bash array assignment `NAME=(...)`, one or several lines. */
function bashArray(name: string): string[] {
  const body = new RegExp(`^${name}=\\(([^)]*)\\)`, 'm').exec(script);
  assert.ok(body, `${SCRIPT} has no ${name}=(...)`);
  return body[1]!.split(/\s+/).filter(Boolean);
}

const MATRIX_VERSIONS = bashArray('MATRIX_VERSIONS');
const E2E_FILES = bashArray('E2E_FILES');
const PINNED = /^NATS_SERVER_VERSION=(\S+)$/m.exec(read('scripts/test-deps.sh'))![1]!;

/** The rows of README.md's "NATS compatibility" table, as arrays of cells. */
function readmeRows(): string[][] {
  const readme = read('README.md');
  const start = readme.indexOf('\n## NATS compatibility\n');
  assert.ok(start >= 0, 'README.md has no "NATS compatibility" section');
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

describe('scripts/nats-matrix.sh', () => {
  it('tests newest patches of release lines other than the pinned one, each once', () => {
    assert.ok(MATRIX_VERSIONS.length >= 1);
    for (const version of MATRIX_VERSIONS) assert.match(version, /^v2\.\d+\.\d+$/);
    const lines = [...MATRIX_VERSIONS, PINNED].map((version) => version.split('.').slice(0, 2).join('.'));
    assert.equal(new Set(lines).size, lines.length, `one version per release line: ${lines.join(', ')}`);
  });

  it('runs end-to-end files of test/lattice/ that exist and start nats-server and the real wadm', () => {
    assert.ok(E2E_FILES.length >= 1);
    assert.equal(new Set(E2E_FILES).size, E2E_FILES.length);
    for (const file of E2E_FILES) {
      assert.match(file, /^test\/lattice\/[\w-]+\.test\.ts$/);
      assert.ok(existsSync(resolve(ROOT, file)), `${file} does not exist`);
      // Directly or through a stage that starts both (lattice-stage.ts, scenario.ts).
      assert.match(read(file), /support\/(nats-server|lattice-stage|scenario)\.js'/, `${file} starts no nats-server`);
    }
  });

  it('prints its usage, and refuses an unknown argument', () => {
    const help = spawnSync('bash', [SCRIPT, '--help'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /^Usage: scripts\/nats-matrix\.sh /m);
    const wrong = spawnSync('bash', [SCRIPT, '--everything'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(wrong.status, 2);
    assert.match(wrong.stderr, /unknown argument '--everything'/);
  });

  it('is what `npm run test:nats-matrix` runs, and CI runs it after npm test', () => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    assert.equal(scripts['test:nats-matrix'], `bash ${SCRIPT}`);
    const ci = read('.ci/run').split('\n');
    const npmTest = ci.indexOf('npm test');
    assert.ok(npmTest >= 0, '.ci/run runs npm test');
    assert.ok(ci.indexOf('npm run test:nats-matrix') > npmTest, '.ci/run runs the matrix after npm test');
  });
});

describe("README.md's NATS compatibility table", () => {
  const rows = readmeRows();

  it('names exactly the versions tested: the matrix and the pinned one, in order', () => {
    const sorted = (versions: string[]) => [...versions].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
    const versions = rows.map((row) => row[0]!);
    assert.deepEqual(versions, sorted(versions), 'rows in version order');
    assert.deepEqual(versions, sorted([...MATRIX_VERSIONS, PINNED]));
  });

  it('gives each matrix version its result on every file of the tier', () => {
    for (const row of rows.filter((cells) => MATRIX_VERSIONS.includes(cells[0]!)))
      assert.ok(
        row.some((cell) => cell.includes(`/${E2E_FILES.length} files`)),
        `${row[0]}: no "N/${E2E_FILES.length} files" cell in | ${row.join(' | ')} |`,
      );
  });
});
