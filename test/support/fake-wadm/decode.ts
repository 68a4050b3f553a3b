// Decodes a parsed body into the typed manifest with wadm-types' serde rules:
// `Manifest`, `ComponentProperties`, `CapabilityProperties`, `ConfigProperty`, `Trait`, spread
// properties deny unknown fields; `Metadata`, `Specification`, `Component`, `Policy` and links
// ignore them (`Component` has a TODO where its `deny_unknown_fields` is commented out, and
// `LinkProperty` has a hand-written deserializer that only reads the keys it knows).
import {
  WadmPanic, content, entries, fail, field, get, invalidType, isObject, optional, seq, str, stringMap, struct, usize,
  type Ctx, type Node,
} from './serde.js';
import type {
  Component, ComponentProperties, ConfigDefinition, ConfigProperty, LinkProperty, Manifest, Policy,
  SecretProperty, SharedRef, Spread, SpreadScalerProperty, Trait, TraitProperty,
} from './types.js';

export function decodeManifest(node: Node, ctx: Ctx): Manifest {
  const f = struct(node, ctx, {
    name: 'Manifest', denyUnknown: true, required: ['apiVersion', 'kind', 'metadata', 'spec'],
    fields: { apiVersion: str, kind: str, metadata: decodeMetadata, spec: decodeSpec },
  });
  return { apiVersion: get(f, 'apiVersion'), kind: get(f, 'kind'), metadata: get(f, 'metadata'), spec: get(f, 'spec') };
}

function decodeMetadata(node: Node, ctx: Ctx): Manifest['metadata'] {
  const f = struct(node, ctx, {
    name: 'Metadata', required: ['name', 'annotations'],
    fields: { name: str, annotations: stringMap, labels: stringMap },
  });
  return { name: get(f, 'name'), annotations: get(f, 'annotations'), labels: get(f, 'labels') ?? new Map() };
}

function decodeSpec(node: Node, ctx: Ctx): Manifest['spec'] {
  const f = struct(node, ctx, {
    name: 'Specification', required: ['components'],
    fields: { components: (n, c) => seq(n, c, decodeComponent), policies: (n, c) => seq(n, c, decodePolicy) },
  });
  return { components: get(f, 'components'), policies: get(f, 'policies') ?? [] };
}

function decodePolicy(node: Node, ctx: Ctx): Policy {
  const f = struct(node, ctx, {
    name: 'Policy', required: ['name', 'properties', 'type'],
    fields: { name: str, properties: stringMap, type: str },
  });
  return { name: get(f, 'name'), properties: get(f, 'properties'), type: get(f, 'type') };
}

/** `name` and `traits` are read directly; everything else is the flattened, buffered `Properties`. */
function decodeComponent(node: Node, ctx: Ctx): Component {
  let name: string | undefined;
  let traits: Trait[] | undefined;
  const rest: Record<string, Node> = {};
  for (const [key, value] of entries(node, ctx)) {
    if (key === 'name') name = str(value, field(ctx, key));
    else if (key === 'traits') traits = optional(value, field(ctx, key), (n, c) => seq(n, c, decodeTrait));
    else rest[key] = value;
  }
  if (name === undefined) fail(ctx, 'missing field `name`');
  const buffered = content(rest, ctx);
  const { type, properties } = decodeProperties(buffered.node, buffered.ctx);
  return { name, type, properties, traits };
}

function decodeProperties(node: Node, ctx: Ctx): Pick<Component, 'type' | 'properties'> {
  const map = isObject(node) ? node : {};
  const tag = map['type'];
  if (tag === undefined) fail(ctx, 'missing field `type`');
  if (typeof tag !== 'string') invalidType(tag, ctx, 'variant identifier');
  const type = tag === 'component' || tag === 'actor' ? 'component' : tag === 'capability' ? 'capability' : undefined;
  if (type === undefined) fail(ctx, `unknown variant \`${tag}\`, expected one of \`actor\`, \`component\`, \`capability\``);
  if (!Object.hasOwn(map, 'properties')) fail(ctx, 'missing field `properties`');
  const props = type === 'component' ? 'ComponentProperties' : 'CapabilityProperties';
  return { type, properties: decodeComponentProperties(map['properties'], ctx, props) };
}

function decodeComponentProperties(node: Node, ctx: Ctx, name: string): ComponentProperties {
  const f = struct(node, ctx, {
    name, denyUnknown: true,
    fields: {
      image: (n, c) => optional(n, c, str),
      application: (n, c) => optional(n, c, decodeShared),
      id: (n, c) => optional(n, c, str),
      config: (n, c) => seq(n, c, decodeConfig),
      secrets: (n, c) => seq(n, c, decodeSecret),
    },
  });
  return {
    image: get(f, 'image'), application: get(f, 'application'), id: get(f, 'id'),
    config: get(f, 'config') ?? [], secrets: get(f, 'secrets') ?? [],
  };
}

function decodeShared(node: Node, ctx: Ctx): SharedRef {
  const f = struct(node, ctx, {
    name: 'SharedApplicationComponentProperties', required: ['name', 'component'],
    fields: { name: str, component: str },
  });
  return { name: get(f, 'name'), component: get(f, 'component') };
}

function decodeConfig(node: Node, ctx: Ctx): ConfigProperty {
  const f = struct(node, ctx, {
    name: 'ConfigProperty', denyUnknown: true, required: ['name'],
    fields: { name: str, properties: (n, c) => optional(n, c, stringMap) },
  });
  return { name: get(f, 'name'), properties: get(f, 'properties') };
}

function decodeSecret(node: Node, ctx: Ctx): SecretProperty {
  const f = struct(node, ctx, {
    name: 'SecretProperty', required: ['name', 'properties'],
    fields: { name: str, properties: decodeSecretSource },
  });
  return { name: get(f, 'name'), properties: get(f, 'properties') };
}

function decodeSecretSource(node: Node, ctx: Ctx): SecretProperty['properties'] {
  const f = struct(node, ctx, {
    name: 'SecretSourceProperty', required: ['policy', 'key'],
    fields: { policy: str, key: str, field: (n, c) => optional(n, c, str), version: (n, c) => optional(n, c, str) },
  });
  return { policy: get(f, 'policy'), key: get(f, 'key'), field: get(f, 'field'), version: get(f, 'version') };
}

function decodeTrait(node: Node, ctx: Ctx): Trait {
  const f = struct(node, ctx, {
    name: 'Trait', denyUnknown: true, required: ['type', 'properties'],
    fields: { type: str, properties: decodeTraitProperty },
  });
  return { type: get(f, 'type'), properties: get(f, 'properties') };
}

/** serde's untagged enum: the first variant that decodes wins, and `Custom` takes anything. */
function decodeTraitProperty(node: Node, ctx: Ctx): TraitProperty {
  const buffered = content(node, ctx);
  const link = attempt(() => decodeLink(buffered.node, buffered.ctx));
  if (link !== undefined) return { kind: 'link', link };
  const scaler = attempt(() => decodeSpreadScaler(buffered.node, buffered.ctx));
  if (scaler !== undefined) return { kind: 'scaler', scaler };
  return { kind: 'custom', value: buffered.node };
}

function attempt<T>(decode: () => T): T | undefined {
  try {
    return decode();
  } catch (e) {
    if (e instanceof WadmPanic) throw e;
    return undefined;
  }
}

/** Port of `impl Deserialize for LinkProperty`, including its legacy keys and its unwraps. */
function decodeLink(node: Node, ctx: Ctx): LinkProperty {
  const json = isObject(node) ? node : {};
  const has = (key: string): boolean => Object.hasOwn(json, key);
  let target: LinkProperty['target'] = { name: '', config: [], secrets: [] };
  if (has('target')) {
    const t = json['target'];
    target = typeof t === 'string'
      ? { name: t, config: has('target_config') ? seq(json['target_config'], ctx, decodeConfig) : [], secrets: [] }
      : decodeTargetConfig(t, ctx);
  }
  let source: ConfigDefinition | undefined;
  if (has('source_config')) source = { config: seq(json['source_config'], ctx, decodeConfig), secrets: [] };
  if (has('source')) source = decodeConfigDefinition(json['source'], ctx);
  for (const key of ['namespace', 'package', 'interfaces']) {
    if (!has(key)) fail(ctx, `${key} is required`);
  }
  return {
    namespace: unwrapStr(json['namespace']),
    package: unwrapStr(json['package']),
    interfaces: unwrapArray(json['interfaces']).map(unwrapStr),
    source,
    target,
    name: has('name') ? unwrapStr(json['name']) : undefined,
  };
}

// wadm does `.as_str().unwrap()` / `.as_array().unwrap()` here: a non-string value panics the
// API task and exits wadm (reference §13 item 13).
function unwrapStr(node: Node): string {
  if (typeof node === 'string') return node;
  throw new WadmPanic('called `Option::unwrap()` on a `None` value (LinkProperty deserializer)');
}

function unwrapArray(node: Node): Node[] {
  if (Array.isArray(node)) return node;
  throw new WadmPanic('called `Option::unwrap()` on a `None` value (LinkProperty deserializer)');
}

function decodeTargetConfig(node: Node, ctx: Ctx): LinkProperty['target'] {
  const f = struct(node, ctx, {
    name: 'TargetConfig', required: ['name'],
    fields: { name: str, config: (n, c) => seq(n, c, decodeConfig), secrets: (n, c) => seq(n, c, decodeSecret) },
  });
  return { name: get(f, 'name'), config: get(f, 'config') ?? [], secrets: get(f, 'secrets') ?? [] };
}

function decodeConfigDefinition(node: Node, ctx: Ctx): ConfigDefinition {
  const f = struct(node, ctx, {
    name: 'ConfigDefinition',
    fields: { config: (n, c) => seq(n, c, decodeConfig), secrets: (n, c) => seq(n, c, decodeSecret) },
  });
  return { config: get(f, 'config') ?? [], secrets: get(f, 'secrets') ?? [] };
}

function decodeSpreadScaler(node: Node, ctx: Ctx): SpreadScalerProperty {
  const f = struct(node, ctx, {
    name: 'SpreadScalerProperty', denyUnknown: true, required: ['instances'], aliases: { replicas: 'instances' },
    fields: { instances: usize, spread: (n, c) => seq(n, c, decodeSpread) },
  });
  return { instances: get(f, 'instances'), spread: get(f, 'spread') ?? [] };
}

function decodeSpread(node: Node, ctx: Ctx): Spread {
  const f = struct(node, ctx, {
    name: 'Spread', denyUnknown: true, required: ['name', 'requirements'],
    fields: { name: str, requirements: stringMap, weight: (n, c) => optional(n, c, usize) },
  });
  return { name: get(f, 'name'), requirements: get(f, 'requirements'), weight: get(f, 'weight') };
}
