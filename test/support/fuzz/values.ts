// The values fuzz cases are made of: hostile strings (NATS wildcards, separators, control characters,
// prototype keys), any JSON and hand-written JSON text, the names of a small world of namespaces and
// owners, and mutations of a JSON value at any path.
import fc from 'fast-check';
import { ADOPT_ANNOTATION, OWNER_ANNOTATION } from '../../../src/core/names.js';

export const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));
export const token = fc.stringMatching(/^[-\w]{1,16}$/);
export const HOSTILE = [
  '*',
  '>',
  '*.>',
  'a.b',
  'a b',
  ' ',
  '',
  '.',
  '..',
  'a*',
  'a>',
  'a.*',
  '>.a',
  'wadm.api.default.model.put',
  '\t',
  '\n',
  'a\nb',
  'a\r\n',
  '\u0000',
  'a\u0000b',
  '\u202eevil\u202c',
  'שלום',
  'مرحبا',
  '😀',
  '👩‍👩‍👧',
  'e\u0301',
  '\ufeff',
  '\uffff',
  '\u2028',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '__defineGetter__',
  'latest',
  'true',
  'True',
  'default',
  'hello-world',
  'app',
  '-',
  '_',
  'a/b',
  '../..',
  'kubernetes.io/x',
  'x.k8s.io/y',
  OWNER_ANNOTATION,
  ADOPT_ANNOTATION,
  'version',
  'description',
  '{namespace}',
  '%2A',
  '\\',
  '"',
  "'",
  '${x}',
  'x'.repeat(129),
];
export const hostileString = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...HOSTILE) },
  { weight: 2, arbitrary: token },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) },
  { weight: 1, arbitrary: fc.tuple(token, loneSurrogate, token).map(([a, s, b]) => a + s + b) },
  { weight: 2, arbitrary: fc.tuple(token, fc.constantFrom('*', '>', '.', ' ', '\u0000', '/', '\n'), token).map(([a, s, b]) => a + s + b) },
);
export const nonEmptyHostile = hostileString.filter((s) => s.length > 0);
export const hostileKey = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype') },
  { weight: 3, arbitrary: hostileString },
);

/** Any JSON value, including hostile strings and numbers at the edges. */
export const jsonish: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 3, arbitrary: hostileString },
  {
    weight: 2,
    arbitrary: fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, 1e300, 2 ** 53 + 2, -(2 ** 31), [], {}, [null], { '': '' }),
  },
  {
    weight: 1,
    arbitrary: fc
      .anything({
        maxDepth: 2,
        withDate: true,
        withMap: true,
        withSet: true,
        withNullPrototype: true,
        withSparseArray: true,
        withBoxedValues: true,
      })
      .map((value) => {
        const text = JSON.stringify(value);
        return text === undefined ? null : (JSON.parse(text) as unknown);
      }),
  },
);

export const JSON_LEAVES = [
  'null',
  'true',
  'false',
  '0',
  '-0',
  '1e400',
  '-1e400',
  '1e-400',
  '123456789012345678901234567890',
  '1E21',
  '0.1',
  '-1',
];
/** JSON text, written out by hand so that `__proto__`, `constructor` and duplicate keys really appear in it. */
export const { rawJson } = fc.letrec<{ rawJson: string; rawLeaf: string; rawArray: string; rawObject: string }>((tie) => ({
  rawJson: fc.oneof({ depthSize: 'small' }, tie('rawLeaf'), tie('rawArray'), tie('rawObject')),
  rawLeaf: fc.oneof(
    fc.constantFrom(...JSON_LEAVES),
    hostileString.map((s) => JSON.stringify(s)),
    fc.double().map((d) => JSON.stringify(d)),
  ),
  rawArray: fc.array(tie('rawJson'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
  rawObject: fc.array(fc.tuple(hostileKey, tie('rawJson')), { maxLength: 4 }).map((members) => objectText(members)),
}));

export function objectText(members: [string, string][]): string {
  return `{${members.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(',')}}`;
}

/** Adds raw members to the front of an object's JSON text (other texts are returned as they are). */
export function withMembers(text: string, members: [string, string][]): string {
  if (members.length === 0 || !text.startsWith('{')) return text;
  const rest = text.slice(1).trimStart();
  return `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}${rest.startsWith('}') ? '' : ','}${rest}`;
}

export const NAMES = ['hello-world', 'app', 'a-b', 'x_y'];
export const NAMESPACES = ['default', 'team-a', 'team-b', 'kube-system'];
export const OWNERS: (string | null)[] = [...NAMESPACES.flatMap((ns) => NAMES.map((n) => `${ns}/${n}`)), null, '', 'someone/else', '*/*'];
export const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

export interface Mutation {
  op: 'replace' | 'delete' | 'insert';
  at: number;
  key: string;
  value: unknown;
}
export const mutation: fc.Arbitrary<Mutation> = fc.record({
  op: fc.constantFrom('replace', 'delete', 'insert'),
  at: fc.nat(),
  key: hostileKey,
  value: jsonish,
});
export const mutations = fc.oneof(
  { weight: 3, arbitrary: fc.constant<Mutation[]>([]) },
  { weight: 4, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }) },
);

export type Path = (string | number)[];
export function pathsOf(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  out.push(prefix);
  if (Array.isArray(value)) value.forEach((item, i) => pathsOf(item, [...prefix, i], out));
  else if (value !== null && typeof value === 'object')
    for (const key of Object.keys(value)) pathsOf((value as Record<string, unknown>)[key], [...prefix, key], out);
  return out;
}

/** Own data property, even for `__proto__` (as JSON.parse would make it). */
export function define(target: object, key: string | number, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Replaces, deletes or adds at a path of a JSON value; returns the new value (the input is copied). */
export function mutate(root: unknown, m: Mutation): unknown {
  const copy = clone(root);
  const paths = pathsOf(copy);
  const path = paths[m.at % paths.length]!;
  if (path.length === 0) return m.op === 'replace' ? clone(m.value) : copy;
  const parent = path.slice(0, -1).reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], copy) as Record<
    string | number,
    unknown
  >;
  const last = path[path.length - 1]!;
  const target = parent[last];
  switch (m.op) {
    case 'replace':
      define(parent, last, clone(m.value));
      break;
    case 'delete':
      if (Array.isArray(parent)) parent.splice(Number(last), 1);
      else delete parent[last];
      break;
    case 'insert':
      if (Array.isArray(target)) target.push(clone(m.value));
      else if (target !== null && typeof target === 'object') define(target, m.key, clone(m.value));
      else define(parent, last, clone(m.value));
      break;
  }
  return copy;
}
