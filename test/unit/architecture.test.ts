// The layout is the architecture: every folder sits on a floor and imports only folders below it
// (no import runs back up), the pure core imports nothing outside core/ and schema/, and src/
// holds, beside its folders, the three files a reader looks for first: main.ts (the process),
// server.ts (the HTTP service) and sync.ts (the sync hook), each on its own floor like a folder.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';

const SRC = resolve(import.meta.dirname, '../../src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Every module a file imports, as the path of its source relative to src/ (packages as themselves). */
function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map(([, spec]) =>
    spec!.startsWith('.') ? relative(SRC, resolve(dirname(file), spec!)).replace(/\.js$/, '.ts') : spec!,
  );
}

/** A file's floor is its folder's, or its own for the files at the top of src/. */
const folderOf = (path: string) => path.split('/')[0]!;

/**
 * The floors, from the ground up. The schemas (and wadm's vocabulary with them) and the plumbing
 * (config, logs, metrics) are what any layer may import; the core decides, beside the plumbing; the lattice (wadm over NATS), the HTTP shell and the v2
 * converter each use the core and never each other; sync.ts runs the core's steps against a
 * lattice and keeps answers (http/answers.ts); server.ts serves sync.ts over HTTP; the CLI uses
 * the lower floors; the wiring composes the service from all of them, and main.ts owns the process.
 */
const FLOORS: Record<string, number> = {
  schema: 0,
  plumbing: 1,
  core: 1,
  lattice: 2,
  http: 2,
  convert: 2,
  'sync.ts': 3,
  'server.ts': 4,
  cli: 4,
  wiring: 5,
  'main.ts': 6,
};

describe('the source layout', () => {
  it('holds only main.ts, server.ts, sync.ts and folders at the top of src/', () => {
    const top = readdirSync(SRC).filter((entry) => !statSync(join(SRC, entry)).isDirectory());
    assert.deepEqual(top.sort(), ['main.ts', 'server.ts', 'sync.ts']);
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

  it('has no import that runs back up: each folder imports only its own and those on lower floors', () => {
    const folders = readdirSync(SRC).filter((entry) => statSync(join(SRC, entry)).isDirectory());
    assert.deepEqual(
      folders.filter((folder) => FLOORS[folder] === undefined),
      [],
      'every folder has a floor',
    );
    for (const file of files(SRC)) {
      const from = folderOf(relative(SRC, file));
      for (const target of imports(file)) {
        const to = FLOORS[folderOf(target)] === undefined ? undefined : folderOf(target);
        if (to === undefined || to === from) continue;
        assert.ok(FLOORS[to]! < FLOORS[from]!, `${relative(SRC, file)} (floor ${FLOORS[from]}) imports ${target} (floor ${FLOORS[to]})`);
      }
    }
  });

  it('keeps the plumbing free of the layers that use it', () => {
    for (const file of files(join(SRC, 'plumbing'))) {
      for (const target of imports(file))
        assert.ok(
          !['core', 'http', 'lattice', 'sync.ts', 'server.ts', 'cli', 'convert', 'wiring', 'main.ts'].includes(folderOf(target)),
          `${relative(SRC, file)} imports ${target}`,
        );
    }
  });

  // A backstop against a file that grows without bound, not a target: a file holds one idea, and
  // one that needs its full list of rules at the top (lattice/knowledge.ts) or a catalogue that
  // Prettier lays out a field per line (core/reasons.ts) is not split to fit.
  it('keeps every source file under 400 lines', () => {
    for (const file of files(SRC)) {
      const lines = readFileSync(file, 'utf8').split('\n').length;
      assert.ok(lines <= 400, `${relative(SRC, file)} has ${lines} lines`);
    }
  });
});
