// `npm run build`: type-checks src/ (tsc, no output), then bundles src/main.ts and the libraries it
// imports into one file, dist/main.js, which `npm start`, the image and the bin entry run.
// `node scripts/build.mjs OUTFILE` writes the bundle elsewhere (a test lays out the image's /app).
//
// Why one file: Node keeps every loaded module's source, wrapper and resolution state; the ~300
// files of Fastify, ajv, TypeBox, nats and prom-client cost the idle service 13 MiB of RSS
// (88 → 75 MiB, docs/benchmarks-history.md, second round of issue 15). Whitespace and syntax are
// minified, names are not, so that stack traces stay readable; dist/main.js.map maps them back to
// src/ under `node --enable-source-maps`.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { RUNTIME_PACKAGES } from './runtime-modules.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');

const typecheck = spawnSync(process.execPath, [TSC, '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
if (typecheck.status !== 0) process.exit(typecheck.status ?? 1);

const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const outfile = process.argv[2] === undefined ? join(ROOT, 'dist/main.js') : resolve(process.argv[2]);
// Nothing left over from an earlier build (tsc once wrote a tree of files here).
if (process.argv[2] === undefined) rmSync(join(ROOT, 'dist'), { recursive: true, force: true });
await build({
  absWorkingDir: ROOT,
  entryPoints: ['src/main.ts'],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  // The oldest supported line (package.json's engines); the bundle is byte for byte the one for
  // node20, which the build machines' Node 20 runs in the tests.
  target: 'node22',
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: 'linked',
  sourcesContent: false,
  // The packages that must stay files in node_modules (scripts/runtime-modules.mjs says why).
  external: RUNTIME_PACKAGES,
  // The CommonJS libraries in the bundle call require() for Node's own modules.
  banner: {
    js: "import { createRequire as createRequireForBundle } from 'node:module'; const require = createRequireForBundle(import.meta.url);",
  },
  // src/plumbing/version.ts reads package.json when run from source; the bundle carries the version.
  define: { BUNDLED_VERSION: JSON.stringify(version) },
  logLevel: 'warning',
});
