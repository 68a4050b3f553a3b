// JSON as Go sees it. Metacontroller compares statuses with reflect.DeepEqual on decoded maps (key order irrelevant,
// array order relevant) and marshals maps with sorted keys and HTML-escaped strings.

export function deepCopy<T>(value: T): T {
  return structuredClone(value);
}

/** A copy with every object's keys sorted, dropping undefined members the way JSON.stringify does. */
export function canonicalize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : canonicalize(item)));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const member = (value as Record<string, unknown>)[key];
      if (member !== undefined) out[key] = canonicalize(member);
    }
    return out;
  }
  return value;
}

/** Canonical text of a value; `undefined` (an absent field) stays distinct from every JSON value. */
export function canonicalJson(value: unknown): string {
  return value === undefined ? 'undefined' : JSON.stringify(canonicalize(value));
}

/** reflect.DeepEqual of two decoded JSON values. */
export function jsonDeepEqual(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** encoding/json escapes <, >, & and the JS line separators inside strings; they can occur nowhere else. */
export function goEscape(json: string): string {
  return json
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Go's name for the JSON type of a value, as in "cannot unmarshal string into ...". */
export function jsonTypeName(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'boolean') return 'bool';
  return typeof value;
}
