// Every path of this repository named in a comment, a doc or a manifest exists: files move, and a
// pointer to where a file used to be sends a reader nowhere. History (CHANGELOG.md, the benchmarks'
// history) records what was true on its date and is not checked.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
const HISTORY = /^(CHANGELOG\.md|docs\/benchmarks-history\.md)$/;
const NOT_TEXT = /\.(png|jpe?g|wasm|tgz|gz|lock)$|package-lock\.json$|^dist\//;
/** Paths of other projects that look like ours (wadm's sources, Argo CD's, wasmCloud's and Metacontroller's trees) and files the bench writes. */
const ELSEWHERE = [
  /^src\/server\//,
  /^manifests\/production/,
  /^docs\/operator-manual\//,
  /^examples\/rust\//,
  /^charts\/runtime-operator/,
  /^bench\/results/,
];
const SRC_FOLDERS = ['core', 'lattice', 'http', 'plumbing', 'wiring', 'schema', 'cli', 'convert'];

function tracked(): string[] {
  return execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((file) => file && !HISTORY.test(file) && !NOT_TEXT.test(file) && existsSync(join(ROOT, file)));
}

/** The paths a text names: `src/…`, `test/…` and the other top folders; in src/ and docs, `core/x.ts` and the like too. */
function named(file: string, text: string): string[] {
  const paths = [...text.matchAll(/(?<![\w./-])((?:src|scripts|bench|test|manifests|charts|examples|docs)\/[\w./-]*[\w/])/g)].map(
    ([, path]) => path!,
  );
  if (/^(src|docs)\/|^README\.md$/.test(file)) {
    const inSrc = new RegExp(`(?<![\\w./-])((?:${SRC_FOLDERS.join('|')})/[\\w.-]+\\.ts)\\b`, 'g');
    paths.push(...[...text.matchAll(inSrc)].map(([, path]) => `src/${path!}`));
  }
  return paths.filter((path) => !path.includes('*') && !ELSEWHERE.some((pattern) => pattern.test(path)));
}

/** A path in test/wadm/ (its own Cargo project) may be relative to that project. */
function exists(file: string, path: string): boolean {
  return existsSync(join(ROOT, path)) || (file.startsWith('test/wadm/') && existsSync(join(ROOT, dirname(file), path)));
}

describe('paths named in the repository', () => {
  it('all exist', () => {
    const missing: string[] = [];
    for (const file of tracked()) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const path of named(file, text)) if (!exists(file, path)) missing.push(`${file} names ${path}`);
    }
    assert.deepEqual([...new Set(missing)], []);
  });

  it('would notice a path that does not exist', () => {
    // Joined here, so that this file names no missing path itself.
    const [gone, moved, inSrc] = [
      ['src', 'service', 'build.ts'],
      ['lattice', 'layer.ts'],
      ['src', 'x.ts'],
    ].map((parts) => parts.join('/'));
    assert.deepEqual(named(inSrc!, `// see ${gone} and ${moved}`), [gone, `src/${moved}`]);
    assert.equal(exists(inSrc!, gone!), false);
  });
});
