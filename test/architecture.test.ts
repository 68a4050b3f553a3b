// The layout is the architecture: the pure core imports nothing outside core/ and schema/, the
// lattice layer never imports the HTTP shell, and src/ holds only main.ts beside its folders.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';

const SRC = resolve(import.meta.dirname, '../src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Every module a file imports, as a path relative to src/ (packages as themselves). */
function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map(([, spec]) =>
    spec!.startsWith('.') ? relative(SRC, resolve(dirname(file), spec!)) : spec!,
  );
}

const folderOf = (path: string) => path.split('/')[0]!;

describe('the source layout', () => {
  it('holds only main.ts and folders at the top of src/', () => {
    const top = readdirSync(SRC).filter((entry) => !statSync(join(SRC, entry)).isDirectory());
    assert.deepEqual(top, ['main.ts']);
  });

  it('keeps the core pure: it imports only core/, schema/ and pure packages, never I/O', () => {
    const allowed = new Set(['core', 'schema', 'node:crypto', 'js-yaml', '@sinclair/typebox']);
    for (const file of files(join(SRC, 'core'))) {
      for (const target of imports(file)) {
        const where = target.includes('/') && !target.startsWith('@') && !target.startsWith('node:') ? folderOf(target) : target;
        assert.ok(allowed.has(where), `${relative(SRC, file)} imports ${target}`);
      }
    }
  });

  it('keeps the lattice layer below the HTTP shell and the CLI', () => {
    for (const file of files(join(SRC, 'lattice'))) {
      for (const target of imports(file)) assert.ok(!['http', 'cli'].includes(folderOf(target)), `${relative(SRC, file)} imports ${target}`);
    }
  });

  it('keeps every source file under 250 lines', () => {
    for (const file of files(SRC)) {
      const lines = readFileSync(file, 'utf8').split('\n').length;
      assert.ok(lines <= 250, `${relative(SRC, file)} has ${lines} lines`);
    }
  });
});
