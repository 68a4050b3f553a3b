// Subject grammar of `crates/wadm/src/server/mod.rs` (`parse_subject` + the `match` in `serve`),
// single-tenant only: `{prefix}.{lattice}.{category}.{operation}[.{object}]`.
import type { WadmOp } from './types.js';

export interface ParsedSubject { lattice: string; category: string; operation: string; name: string | undefined }

export type Route =
  | { ok: true; op: WadmOp; lattice: string; name: string | undefined }
  | { ok: false; lattice: string | undefined; operation: string | undefined; error: string };

const EXTRA_COMPONENTS =
  'Found extra components of subject, ensure your manifest name consists of only alphanumeric characters, dashes, and underscores.';

/** wadm trims spaces and dots off the configured prefix. */
export function normalizePrefix(prefix: string): string {
  const trimmed = prefix.trim().replace(/^\.+|\.+$/g, '');
  if (trimmed === '') throw new Error('Given prefix was empty');
  return trimmed;
}

export function parseSubject(prefix: string, subject: string): ParsedSubject | string {
  // Rust's `trim_start_matches` strips the prefix as many times as it repeats, then the dots.
  let rest = subject;
  while (prefix !== '' && rest.startsWith(prefix)) rest = rest.slice(prefix.length);
  const tokens = rest.replace(/^\.+/, '').split('.');
  const [lattice, category, operation, name, extra] = tokens;
  if (lattice === undefined) return 'Expected to find lattice ID';
  if (category === undefined) return 'Expected to find API category';
  if (operation === undefined) return 'Expected to find operation';
  if (extra !== undefined) return EXTRA_COMPONENTS;
  return { lattice, category, operation, name };
}

const NAMED_OPS: ReadonlySet<string> = new Set(['get', 'del', 'versions', 'deploy', 'undeploy', 'status', 'history']);

/** Maps a subject to an operation, or to the exact error text wadm replies with. */
export function route(prefix: string, subject: string): Route {
  const parsed = parseSubject(prefix, subject);
  if (typeof parsed === 'string') {
    return { ok: false, lattice: undefined, operation: undefined, error: `Invalid subject: ${parsed}` };
  }
  const { lattice, category, operation, name } = parsed;
  const op = category === 'model' ? toOp(operation, name) : undefined;
  if (op === undefined) return { ok: false, lattice, operation, error: `Unsupported subject: ${subject}` };
  return { ok: true, op, lattice, name };
}

function toOp(operation: string, name: string | undefined): WadmOp | undefined {
  if (name === undefined) {
    // `model.get` without a name is the list with the `models` wrapper; `model.list` is the
    // deprecated bare array. Both keep their own op so faults and logs can tell them apart.
    if (operation === 'get' || operation === 'list' || operation === 'put') return operation;
    return undefined;
  }
  return NAMED_OPS.has(operation) ? (operation as WadmOp) : undefined;
}
