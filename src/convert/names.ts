// Kubernetes names for what v1 named more freely (wadm allows `_` and capitals), and the order of
// source field paths in the report.

const MAX_NAME = 253;

/** A DNS-1123 subdomain made from any name: lowercase, other characters as `-`, trimmed. */
export function dnsName(name: string, fallback = 'app'): string {
  const cleaned = name
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, '-')
    .replace(/\.{2,}/g, '.')
    .replace(/-*\.-*/g, '.')
    .slice(0, MAX_NAME)
    .replace(/^[-.]+|[-.]+$/g, '');
  return cleaned === '' ? fallback : cleaned;
}

/** `<base>-<suffix>`, cut so that it stays a valid name. */
export function joinName(base: string, suffix: string): string {
  const tail = dnsName(suffix, 'spread');
  return dnsName(`${base.slice(0, MAX_NAME - tail.length - 1)}-${tail}`);
}

/** Source order: `spec.components[2]` before `spec.components[10]`, a field before its children. */
export function comparePaths(a: string, b: string): number {
  const left = tokens(a);
  const right = tokens(b);
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const [x, y] = [left[i]!, right[i]!];
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    return String(x) < String(y) ? -1 : 1;
  }
  return left.length - right.length;
}

function tokens(path: string): (string | number)[] {
  return path
    .split(/[.[\]]+/)
    .filter((t) => t !== '')
    .map((t) => (/^\d+$/.test(t) ? Number(t) : t));
}
