// Just enough of serde's behaviour to decode a manifest the way wadm does, with serde's
// error wording ("missing field `x`", "unknown field `y`, expected ...", "invalid type: ...").
//
// YAML needs one subtlety (checked against wadm-types 0.8.3 + serde_yaml 0.9.34): where serde_yaml
// deserializes a struct field directly (manifest, metadata, annotations/labels, policies,
// component `name`, trait `type`), ANY plain scalar is accepted as a string (`version: 1.0` ->
// "1.0"). Inside a component's flattened `properties` and inside trait properties (which go
// through serde's buffered `Content`), plain scalars keep their YAML type, so `port: 8080` is
// "invalid type: integer `8080`, expected a string". JSON is strict everywhere.

/** A plain (unquoted) YAML scalar that YAML would resolve to null, a bool or a number. */
export class YamlPlain {
  constructor(readonly raw: string, readonly value: null | boolean | number) {}
  // js-yaml stringifies mapping keys; the tag makes it call our toString instead of '[object Object]'.
  get [Symbol.toStringTag](): string { return 'YamlPlain'; }
  toString(): string { return this.raw; }
}

export type Node = string | number | boolean | null | undefined | YamlPlain | Node[] | { [key: string]: Node };

export interface Ctx {
  format: 'yaml' | 'json';
  /** serde_yaml's direct path: plain scalars are strings, empty values are empty collections. */
  lenient: boolean;
  path: string;
  /** Inside buffered Content serde_yaml reports errors at the buffer's root, so the path stops growing. */
  frozen: boolean;
}

export class DecodeError extends Error {}

/** wadm would panic (and exit) here; the fake sends no reply instead. */
export class WadmPanic extends Error {}

export function fail(ctx: Ctx, message: string): never {
  const where = ctx.format === 'yaml' && ctx.path !== '' ? `${ctx.path}: ` : '';
  throw new DecodeError(where + message);
}

export function field(ctx: Ctx, name: string): Ctx {
  if (ctx.frozen) return ctx;
  return { ...ctx, path: ctx.path === '' ? name : `${ctx.path}.${name}` };
}

export function index(ctx: Ctx, i: number): Ctx {
  return ctx.frozen ? ctx : { ...ctx, path: `${ctx.path}[${i}]` };
}

/** Enter serde's buffered `Content`: plain YAML scalars become typed values, strict from here on. */
export function content(node: Node, ctx: Ctx): { node: Node; ctx: Ctx } {
  return { node: toJson(node), ctx: { ...ctx, lenient: false, frozen: true } };
}

export function toJson(node: Node): Node {
  if (node instanceof YamlPlain) return node.value;
  if (node === undefined) return null;
  if (Array.isArray(node)) return node.map(toJson);
  if (isObject(node)) return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, toJson(v)]));
  return node;
}

export function isObject(node: Node): node is { [key: string]: Node } {
  return typeof node === 'object' && node !== null && !Array.isArray(node) && !(node instanceof YamlPlain);
}

function isEmptyYaml(node: Node, ctx: Ctx): boolean {
  return ctx.lenient && (node === null || node === undefined);
}

export function describe(node: Node, ctx: Ctx): string {
  const value = node instanceof YamlPlain ? node.value : node;
  if (value === null || value === undefined) return ctx.format === 'yaml' ? 'unit value' : 'null';
  if (typeof value === 'boolean') return `boolean \`${value}\``;
  if (typeof value === 'number') {
    return Number.isInteger(value) ? `integer \`${value}\`` : `floating point \`${value}\``;
  }
  if (typeof value === 'string') return `string ${JSON.stringify(value)}`;
  return Array.isArray(value) ? 'sequence' : 'map';
}

export function invalidType(node: Node, ctx: Ctx, expected: string): never {
  return fail(ctx, `invalid type: ${describe(node, ctx)}, expected ${expected}`);
}

export function str(node: Node, ctx: Ctx): string {
  if (typeof node === 'string') return node;
  if (ctx.lenient && node instanceof YamlPlain) return node.raw;
  if (isEmptyYaml(node, ctx)) return '';
  return invalidType(node, ctx, 'a string');
}

export function optional<T>(node: Node, ctx: Ctx, decode: (n: Node, c: Ctx) => T): T | undefined {
  if (node === null || node === undefined) return undefined;
  if (node instanceof YamlPlain && node.value === null) return undefined;
  return decode(node, ctx);
}

export function usize(node: Node, ctx: Ctx): number {
  const value = node instanceof YamlPlain ? node.value : node;
  if (typeof value === 'number' && Number.isInteger(value)) {
    if (value >= 0) return value;
    return fail(ctx, `invalid value: integer \`${value}\`, expected usize`);
  }
  return invalidType(node, ctx, 'usize');
}

export function seq<T>(node: Node, ctx: Ctx, decode: (n: Node, c: Ctx) => T): T[] {
  if (isEmptyYaml(node, ctx)) return [];
  if (!Array.isArray(node)) return invalidType(node, ctx, 'a sequence');
  return node.map((item, i) => decode(item, index(ctx, i)));
}

export function entries(node: Node, ctx: Ctx): [string, Node][] {
  if (isEmptyYaml(node, ctx)) return [];
  if (!isObject(node)) return invalidType(node, ctx, 'a map');
  return Object.entries(node);
}

export function stringMap(node: Node, ctx: Ctx): Map<string, string> {
  return new Map(entries(node, ctx).map(([k, v]) => [k, str(v, field(ctx, k))]));
}

export interface StructDef {
  name: string;
  /** Field decoders in declaration order (serde's order for "expected one of" and missing fields). */
  fields: Record<string, (node: Node, ctx: Ctx) => unknown>;
  required?: readonly string[];
  aliases?: Record<string, string>;
  denyUnknown?: boolean;
}

/**
 * Decodes entries in document order like a derived `Deserialize`: the first bad entry wins,
 * unknown keys fail only with `deny_unknown_fields`, missing required fields are checked last.
 */
export function struct(node: Node, ctx: Ctx, def: StructDef): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [key, value] of structEntries(node, ctx, def.name)) {
    const name = def.aliases?.[key] ?? key;
    const decode = Object.hasOwn(def.fields, name) ? def.fields[name] : undefined;
    if (decode === undefined) {
      if (def.denyUnknown) fail(ctx, `unknown field \`${key}\`, ${expectedFields(Object.keys(def.fields))}`);
      continue;
    }
    if (out.has(name)) fail(ctx, `duplicate field \`${name}\``);
    out.set(name, decode(value, field(ctx, key)));
  }
  for (const name of def.required ?? []) {
    if (!out.has(name)) fail(ctx, `missing field \`${name}\``);
  }
  return out;
}

function structEntries(node: Node, ctx: Ctx, name: string): [string, Node][] {
  if (isEmptyYaml(node, ctx)) return [];
  if (!isObject(node)) return invalidType(node, ctx, `struct ${name}`);
  return Object.entries(node);
}

export function expectedFields(names: readonly string[]): string {
  const quoted = names.map((n) => `\`${n}\``);
  if (quoted.length === 0) return 'there are no fields';
  if (quoted.length === 1) return `expected ${quoted[0]}`;
  if (quoted.length === 2) return `expected ${quoted[0]} or ${quoted[1]}`;
  return `expected one of ${quoted.join(', ')}`;
}

/** Reads a decoded field back with its static type (the decoder table guarantees it). */
export function get<T>(fields: Map<string, unknown>, name: string): T {
  return fields.get(name) as T;
}
