// The packages the bundle leaves out (scripts/build.mjs) and everything they depend on: all of
// node_modules the built service loads at run time. The image copies only these; the other
// production dependencies are inside dist/main.js already.
//
// `node scripts/runtime-modules.mjs FROM TO` copies them from FROM/node_modules to TO/node_modules,
// each at the same path, so that Node resolves them there as it did in FROM.
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** pino starts its transports (pino-pretty) as worker threads from files of its own package. */
export const RUNTIME_PACKAGES = ['pino', 'pino-pretty'];

/**
 * The directories, relative to `root`, of `names` and of their dependencies (optional ones where
 * installed), found as Node finds them: in node_modules next to the package that needs them, then
 * further up. Sorted, so that a layout and its test compare the same way.
 */
export function runtimeClosure(root, names = RUNTIME_PACKAGES) {
  const found = new Set();
  const visit = (name, from, optional) => {
    const dir = resolvePackage(root, name, from);
    if (dir === undefined) {
      if (optional) return;
      throw new Error(`${name}, needed by ${relative(root, from) || 'the service'}, is not installed under ${root}`);
    }
    if (found.has(dir)) return;
    found.add(dir);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    for (const dependency of Object.keys(manifest.dependencies ?? {})) visit(dependency, dir, false);
    for (const dependency of Object.keys(manifest.optionalDependencies ?? {})) visit(dependency, dir, true);
  };
  for (const name of names) visit(name, root, false);
  return [...found].map((dir) => relative(root, dir)).sort();
}

/** Copies the closure from `from` to `to`, each package without its own node_modules (those come as packages of their own). */
export function copyRuntimeModules(from, to, names = RUNTIME_PACKAGES) {
  for (const dir of runtimeClosure(from, names)) {
    const source = join(from, dir);
    const nested = join(source, 'node_modules');
    cpSync(source, join(to, dir), { recursive: true, filter: (path) => path !== nested && !path.startsWith(nested + sep) });
  }
}

function resolvePackage(root, name, from) {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === root || dirname(dir) === dir) return undefined;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [from, to] = process.argv.slice(2);
  if (!from || !to) {
    console.error('usage: node scripts/runtime-modules.mjs FROM TO');
    process.exit(2);
  }
  copyRuntimeModules(from, to);
}
