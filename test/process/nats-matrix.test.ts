// The nats-server compatibility matrix (scripts/nats-matrix.sh) and what the docs say of it: the
// README's table names exactly the versions tested (the matrix's and the pinned one of npm test),
// every file of the tier exists and starts the real servers, and CI and npm run it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { assertRunByCi, assertUsage, bashArray, inVersionOrder, read, readmeVersionRows, releaseLine } from '../support/matrix-script.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SCRIPT = 'scripts/nats-matrix.sh';
const MATRIX_VERSIONS = bashArray(SCRIPT, 'MATRIX_VERSIONS');
const E2E_FILES = bashArray(SCRIPT, 'E2E_FILES');
const PINNED = /^NATS_SERVER_VERSION=(\S+)$/m.exec(read('scripts/test-deps.sh'))![1]!;

describe('scripts/nats-matrix.sh', () => {
  it('tests newest patches of release lines other than the pinned one, each once', () => {
    assert.ok(MATRIX_VERSIONS.length >= 1);
    for (const version of MATRIX_VERSIONS) assert.match(version, /^v2\.\d+\.\d+$/);
    const lines = [...MATRIX_VERSIONS, PINNED].map(releaseLine);
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

  it('prints its usage, and refuses an unknown argument', () => assertUsage(SCRIPT));

  it('is what `npm run test:nats-matrix` runs, and CI runs it after npm test', () => assertRunByCi('test:nats-matrix', SCRIPT));
});

describe("README.md's NATS compatibility table", () => {
  const rows = readmeVersionRows('NATS compatibility');

  it('names exactly the versions tested: the matrix and the pinned one, in order', () => {
    const versions = rows.map((row) => row[0]!);
    assert.deepEqual(versions, inVersionOrder(versions), 'rows in version order');
    assert.deepEqual(versions, inVersionOrder([...MATRIX_VERSIONS, PINNED]));
  });

  it('gives each matrix version its result on every file of the tier', () => {
    for (const row of rows.filter((cells) => MATRIX_VERSIONS.includes(cells[0]!)))
      assert.ok(
        row.some((cell) => cell.includes(`/${E2E_FILES.length} files`)),
        `${row[0]}: no "N/${E2E_FILES.length} files" cell in | ${row.join(' | ')} |`,
      );
  });
});
