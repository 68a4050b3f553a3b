// How wadm writes a manifest back (reference §13 item 7): serde field order, `BTreeMap`s sorted,
// empty lists/maps dropped, `replicas` -> `instances`, `actor` -> `component`, legacy link keys
// folded into `target`/`source`. Also Rust's `{:?}` of a component, which wadm puts verbatim in
// put's "some shared components are not deployed" message.
import type {
  Component, ConfigDefinition, ConfigProperty, LinkProperty, Manifest, Policy, SecretProperty, Spread,
  SpreadScalerProperty, StringMap, Trait, WireObject,
} from './types.js';

export function manifestToWire(m: Manifest): WireObject {
  const metadata: WireObject = { name: m.metadata.name };
  if (m.metadata.annotations.size > 0) metadata['annotations'] = sortedObject(m.metadata.annotations);
  if (m.metadata.labels.size > 0) metadata['labels'] = sortedObject(m.metadata.labels);
  const spec: WireObject = { components: m.spec.components.map(componentToWire) };
  if (m.spec.policies.length > 0) spec['policies'] = m.spec.policies.map(policyToWire);
  return { apiVersion: m.apiVersion, kind: m.kind, metadata, spec };
}

function policyToWire(p: Policy): WireObject {
  return { name: p.name, properties: sortedObject(p.properties), type: p.type };
}

function componentToWire(c: Component): WireObject {
  const p = c.properties;
  const properties = compact({
    image: p.image, application: p.application, id: p.id,
    config: nonEmpty(p.config.map(configToWire)), secrets: nonEmpty(p.secrets.map(secretToWire)),
  });
  return compact({ name: c.name, type: c.type, properties, traits: c.traits?.map(traitToWire) });
}

function configToWire(c: ConfigProperty): WireObject {
  // A HashMap in wadm: no defined order, insertion order here.
  return compact({ name: c.name, properties: c.properties && Object.fromEntries(c.properties) });
}

function secretToWire(s: SecretProperty): WireObject {
  return { name: s.name, properties: compact({ ...s.properties }) };
}

function traitToWire(t: Trait): WireObject {
  const p = t.properties;
  const properties = p.kind === 'link' ? linkToWire(p.link) : p.kind === 'scaler' ? scalerToWire(p.scaler) : sortKeys(p.value);
  return { type: t.type, properties };
}

function linkToWire(l: LinkProperty): WireObject {
  return compact({
    namespace: l.namespace, package: l.package, interfaces: l.interfaces,
    source: l.source && configDefinitionToWire(l.source),
    target: compact({ name: l.target.name, ...configDefinitionToWire(l.target) }),
    name: l.name,
  });
}

function configDefinitionToWire(d: ConfigDefinition): WireObject {
  return compact({ config: nonEmpty(d.config.map(configToWire)), secrets: nonEmpty(d.secrets.map(secretToWire)) });
}

function scalerToWire(s: SpreadScalerProperty): WireObject {
  return compact({ instances: s.instances, spread: nonEmpty(s.spread.map(spreadToWire)) });
}

function spreadToWire(s: Spread): WireObject {
  const requirements = s.requirements.size > 0 ? sortedObject(s.requirements) : undefined;
  return compact({ name: s.name, requirements, weight: s.weight });
}

function nonEmpty<T>(items: T[]): T[] | undefined {
  return items.length > 0 ? items : undefined;
}

function compact(o: WireObject): WireObject {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

function sortedObject(map: StringMap): WireObject {
  return Object.fromEntries([...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** serde_json's `Value` keeps object keys in a BTreeMap, so they come out sorted. */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== 'object' || value === null) return value;
  const keys = Object.keys(value).sort();
  return Object.fromEntries(keys.map((k) => [k, sortKeys((value as WireObject)[k])]));
}

/** `Display` of a serde_json `Value`: compact JSON with sorted keys. */
export function jsonDisplay(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

// ---- Rust `{:?}` -------------------------------------------------------------------------------

/** Rust's `Debug` for `str`: quoted, with Rust's escapes. */
export function rustStr(s: string): string {
  const escaped = s.replace(/[\\"\n\r\t\0]|[\u0001-\u001f\u007f]/g, (ch) => {
    const named: Record<string, string> = { '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\0': '\\0' };
    return named[ch] ?? `\\u{${ch.charCodeAt(0).toString(16)}}`;
  });
  return `"${escaped}"`;
}

export function rustList(items: string[]): string {
  return `[${items.join(', ')}]`;
}

const opt = <T>(v: T | undefined, f: (x: T) => string): string => (v === undefined ? 'None' : `Some(${f(v)})`);
const map = (m: StringMap): string => `{${[...m].map(([k, v]) => `${rustStr(k)}: ${rustStr(v)}`).join(', ')}}`;
const sortedMap = (m: StringMap): string => map(new Map([...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));

export function componentDebug(c: Component): string {
  const p = c.properties;
  const kind = c.type === 'component' ? 'Component' : 'Capability';
  const props =
    `${kind}Properties { image: ${opt(p.image, rustStr)}, application: ${opt(p.application, sharedDebug)}, ` +
    `id: ${opt(p.id, rustStr)}, config: ${configsDebug(p.config)}, secrets: ${secretsDebug(p.secrets)} }`;
  const traits = opt(c.traits, (ts) => rustList(ts.map(traitDebug)));
  return `Component { name: ${rustStr(c.name)}, properties: ${kind} { properties: ${props} }, traits: ${traits} }`;
}

function sharedDebug(s: { name: string; component: string }): string {
  return `SharedApplicationComponentProperties { name: ${rustStr(s.name)}, component: ${rustStr(s.component)} }`;
}

function configsDebug(cs: ConfigProperty[]): string {
  return rustList(cs.map((c) => `ConfigProperty { name: ${rustStr(c.name)}, properties: ${opt(c.properties, map)} }`));
}

function secretsDebug(ss: SecretProperty[]): string {
  return rustList(ss.map((s) => {
    const p = s.properties;
    const source = `SecretSourceProperty { policy: ${rustStr(p.policy)}, key: ${rustStr(p.key)}, ` +
      `field: ${opt(p.field, rustStr)}, version: ${opt(p.version, rustStr)} }`;
    return `SecretProperty { name: ${rustStr(s.name)}, properties: ${source} }`;
  }));
}

function traitDebug(t: Trait): string {
  const p = t.properties;
  let props: string;
  if (p.kind === 'link') props = `Link(${linkDebug(p.link)})`;
  else if (p.kind === 'scaler') props = `SpreadScaler(${scalerDebug(p.scaler)})`;
  else props = `Custom(${valueDebug(p.value)})`;
  return `Trait { trait_type: ${rustStr(t.type)}, properties: ${props} }`;
}

function linkDebug(l: LinkProperty): string {
  const def = (d: ConfigDefinition): string => `ConfigDefinition { config: ${configsDebug(d.config)}, secrets: ${secretsDebug(d.secrets)} }`;
  const target = `TargetConfig { name: ${rustStr(l.target.name)}, config: ${configsDebug(l.target.config)}, secrets: ${secretsDebug(l.target.secrets)} }`;
  return `LinkProperty { namespace: ${rustStr(l.namespace)}, package: ${rustStr(l.package)}, ` +
    `interfaces: ${rustList(l.interfaces.map(rustStr))}, source: ${opt(l.source, def)}, target: ${target}, ` +
    `name: ${opt(l.name, rustStr)}, source_config: None, target_config: None }`;
}

function scalerDebug(s: SpreadScalerProperty): string {
  const spreads = s.spread.map((sp) =>
    `Spread { name: ${rustStr(sp.name)}, requirements: ${sortedMap(sp.requirements)}, weight: ${opt(sp.weight, String)} }`);
  return `SpreadScalerProperty { instances: ${s.instances}, spread: ${rustList(spreads)} }`;
}

/** `Debug` of serde_json's `Value`. */
function valueDebug(v: unknown): string {
  if (v === null || v === undefined) return 'Null';
  if (typeof v === 'boolean') return `Bool(${v})`;
  if (typeof v === 'number') return `Number(${v})`;
  if (typeof v === 'string') return `String(${rustStr(v)})`;
  if (Array.isArray(v)) return `Array ${rustList(v.map(valueDebug))}`;
  const entries = Object.keys(v).sort().map((k) => `${rustStr(k)}: ${valueDebug((v as WireObject)[k])}`);
  return `Object {${entries.join(', ')}}`;
}
