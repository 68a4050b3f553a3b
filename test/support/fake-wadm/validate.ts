// `validate_manifest` of `crates/wadm-types/src/validation.rs`, Error-level rules only (put
// rejects on the first Error and ignores Warnings), in wadm's order.
import { WadmPanic } from './serde.js';
import { jsonDisplay, rustList, rustStr } from './serialize.js';
import { SECRET_POLICY_TYPE, manifestVersion, type Component, type Manifest, type SecretProperty, type Trait } from './types.js';

/** Rust's regex `\w` is Unicode-aware: alphabetic, marks, decimal digits, connector punctuation, joiners. */
const MANIFEST_NAME = /^[-\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]+$/u;

export function isValidManifestName(name: string): boolean {
  return MANIFEST_NAME.test(name);
}

/** The first Error-level failure, or undefined when wadm would accept the manifest. */
export function firstValidationError(m: Manifest): string | undefined {
  const rules = [
    nameRule, versionRule, coreValidation, danglingLinks, policies, noCustomTraits,
    componentProperties, duplicateLinks, linkConfigs,
  ];
  for (const rule of rules) {
    const error = rule(m)[0];
    if (error !== undefined) return error;
  }
  return undefined;
}

function nameRule(m: Manifest): string[] {
  const n = m.metadata.name; // untrimmed here, unlike put's own check
  return isValidManifestName(n) ? [] : [`manifest name [${n}] is not allowed (should match regex [^[-\\w]+$])`];
}

function versionRule(m: Manifest): string[] {
  return manifestVersion(m) === 'latest' ? ['latest is not allowed in wadm'] : [];
}

function coreValidation(m: Manifest): string[] {
  const errors: string[] = [];
  for (const [what, map] of [['label', m.metadata.labels], ['annotation', m.metadata.annotations]] as const) {
    for (const [k, v] of map) {
      if (!validOamLabel(k)) errors.push(`Invalid OAM ${what}: (${rustStr(k)}, ${rustStr(v)})`);
    }
  }
  const names = new Set<string>();
  const ids = new Set<string>();
  const targets = new Set<string>();
  for (const c of m.spec.components) {
    if (names.has(c.name)) errors.push(`Duplicate component name in manifest: ${c.name}`);
    names.add(c.name);
    const id = c.properties.id;
    if (id !== undefined) {
      if (ids.has(id)) errors.push(`Duplicate component identifier in manifest: ${id}`);
      ids.add(id);
    }
    for (const t of c.traits ?? []) {
      if (t.properties.kind === 'link') targets.add(t.properties.link.target.name);
    }
  }
  const missing = [...targets].filter((t) => !names.has(t));
  if (missing.length > 0) {
    errors.push(`The following capability component(s) are missing from the manifest: ${rustList(missing.map(rustStr))}`);
  }
  return errors;
}

function linkTraits(m: Manifest): Trait[] {
  return m.spec.components.flatMap((c) => (c.traits ?? []).filter((t) => t.type === 'link'));
}

function danglingLinks(m: Manifest): string[] {
  const errors: string[] = [];
  for (const t of linkTraits(m)) {
    const p = t.properties;
    if (p.kind === 'scaler') throw new WadmPanic('unreachable: manifest.links() should only return links');
    if (p.kind !== 'custom') continue;
    const obj = isRecord(p.value) ? p.value : undefined;
    if (obj === undefined || !Object.hasOwn(obj, 'target')) {
      errors.push("custom link is missing 'target' property");
    } else if (!(isRecord(obj['target']) && typeof obj['target']['name'] === 'string')) {
      errors.push("custom link is missing 'target' name property");
    }
  }
  return errors;
}

function policies(m: Manifest): string[] {
  const errors: string[] = [];
  const byName = new Map(m.spec.policies.map((p) => [p.name, p]));
  for (const c of m.spec.components) {
    for (const s of componentSecrets(c)) {
      const policy = byName.get(s.properties.policy);
      const prefix = `secret '${s.name}' is mapped to`;
      if (policy === undefined) errors.push(`${prefix} unknown policy '${s.properties.policy}'`);
      else if (policy.type !== SECRET_POLICY_TYPE) {
        errors.push(`${prefix} policy '${policy.name}' which is not a secret policy. Expected type '${SECRET_POLICY_TYPE}'`);
      } else if (!policy.properties.has('backend')) {
        errors.push(`${prefix} policy '${policy.name}' which does not include a 'backend' property`);
      }
    }
  }
  return errors;
}

/** `Component::secrets`: link target+source secrets first, then the component's own. */
function componentSecrets(c: Component): SecretProperty[] {
  const fromLinks = (c.traits ?? []).flatMap((t) =>
    t.properties.kind === 'link' ? [...t.properties.link.target.secrets, ...(t.properties.link.source?.secrets ?? [])] : []);
  return [...fromLinks, ...c.properties.secrets];
}

function noCustomTraits(m: Manifest): string[] {
  const errors: string[] = [];
  for (const t of m.spec.components.flatMap((c) => c.traits ?? [])) {
    if (t.properties.kind !== 'custom') continue;
    const shown = jsonDisplay(t.properties.value);
    if (t.type === 'link') errors.push(`Link trait deserialized as custom trait, ensure fields are correct: ${shown}`);
    else if (t.type === 'spreadscaler' || t.type === 'daemonscaler') {
      errors.push(`Scaler trait deserialized as custom trait, ensure fields are correct: ${shown}`);
    }
  }
  return errors;
}

function componentProperties(m: Manifest): string[] {
  const errors: string[] = [];
  for (const c of m.spec.components) {
    const { image, application, config, secrets } = c.properties;
    const hasScaler = (c.traits ?? []).some((t) => t.type === 'spreadscaler' || t.type === 'daemonscaler');
    if (image !== undefined && application !== undefined) {
      errors.push("Component cannot have both 'image' and 'application' properties");
    } else if (image === undefined && application === undefined) {
      errors.push("Component must have either 'image' or 'application' property");
    } else if (application !== undefined && config.length > 0) {
      errors.push(`Shared component '${application.name}' cannot specify additional 'config'`);
    } else if (application !== undefined && secrets.length > 0) {
      errors.push(`Shared component '${application.name}' cannot specify additional 'secrets'`);
    } else if (application !== undefined && hasScaler) {
      errors.push(`Shared component '${application.name}' cannot include a scaler trait`);
    }
  }
  return errors;
}

function duplicateLinks(m: Manifest): string[] {
  const errors: string[] = [];
  for (const c of m.spec.components) {
    const seen = new Set<string>();
    for (const t of (c.traits ?? []).filter((x) => x.type === 'link')) {
      if (t.properties.kind !== 'link') continue;
      const { name = 'default', namespace, package: pkg, interfaces } = t.properties.link;
      for (const iface of interfaces) {
        const key = JSON.stringify([name, namespace, pkg, iface]);
        if (seen.has(key)) errors.push(`Duplicate link found inside component '${c.name}': ${name} (${namespace}:${pkg}/${iface})`);
        seen.add(key);
      }
    }
  }
  return errors;
}

function linkConfigs(m: Manifest): string[] {
  const errors: string[] = [];
  const names = new Set<string>();
  for (const t of linkTraits(m)) {
    if (t.properties.kind !== 'link') continue;
    const { target, source } = t.properties.link;
    for (const config of [...target.config, ...(source?.config ?? [])]) {
      if (config.properties === undefined) continue;
      if (names.has(config.name)) errors.push(`Duplicate link config name found: '${config.name}'`);
      names.add(config.name);
    }
  }
  return errors;
}

/** `valid_oam_label`: `[prefix/]name`, prefix a DNS subdomain, name a label name. */
export function validOamLabel(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash < 0) return validLabelName(key);
  return validDnsSubdomain(key.slice(0, slash)) && validLabelName(key.slice(slash + 1));
}

function validDnsSubdomain(s: string): boolean {
  if (s.length === 0 || s.length > 253) return false;
  return s.split('.').every((part) => /^[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/.test(part));
}

function validLabelName(s: string): boolean {
  return /^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/.test(s);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
