// The scalers wadm builds for a deployed manifest (`crates/wadm/src/scaler/convert.rs`), reduced
// to what a status report shows: id (sha256 of the same parts wadm hashes), kind, name, and what
// the simulated hosts need to word a message.
import { createHash } from 'node:crypto';
import type { Component, ConfigProperty, LinkProperty, Manifest, SecretProperty, SpreadScalerProperty } from './types.js';

export interface ScalerInfo {
  id: string;
  kind: 'SpreadScaler' | 'DaemonScaler' | 'LinkScaler';
  name: string;
  role: 'component' | 'provider' | 'link';
  /** Image reference of a spread/daemon scaler. */
  image: string;
  /** Spreads with their computed instance counts (spread/daemon scalers). */
  spreads: { name: string; count: number }[];
  /** `{source} and {target}` of a link scaler. */
  link?: { source: string; target: string };
}

/** `compute_component_id`: `{app}-{component}` lowercased, non-alphanumerics → `_`, unless `id` is set. */
export function componentId(app: string, id: string | undefined, component: string): string {
  if (id !== undefined) return id;
  const clean = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]/g, '_');
  return `${clean(app)}-${clean(component)}`;
}

export function scalersFor(m: Manifest): ScalerInfo[] {
  return m.spec.components.flatMap((c) => componentScalers(m, c));
}

/** (application, component) a component resolves to: itself, or a shared app's component. */
function resolve(m: Manifest, c: Component): [string, string] {
  const shared = c.properties.image === undefined ? c.properties.application : undefined;
  return shared ? [shared.name, shared.component] : [m.metadata.name, c.name];
}

function componentScalers(m: Manifest, c: Component): ScalerInfo[] {
  const [app, name] = resolve(m, c);
  const ownId = componentId(app, c.properties.id, name);
  const role = c.type === 'component' ? 'component' : 'provider';
  const image = c.properties.image;
  const configNames = [...configIds(m.metadata.name, c.properties.config), ...secretIds(m.metadata.name, c.properties.secrets)];
  const scalers: ScalerInfo[] = [];
  let scalerSpecified = false;
  for (const t of c.traits ?? []) {
    const p = t.properties;
    const isScalerTrait = t.type === 'spreadscaler' || t.type === 'daemonscaler';
    if (isScalerTrait && p.kind === 'scaler' && image !== undefined) {
      scalerSpecified = true;
      const kind = t.type === 'spreadscaler' ? 'SpreadScaler' : 'DaemonScaler';
      scalers.push(spreadScaler(kind, role, app, c.name, ownId, image, p.scaler, configNames));
    } else if (t.type === 'link' && p.kind === 'link') {
      const target = m.spec.components.find((x) => x.name === p.link.target.name);
      // Providers may only link to components; wadm logs and drops provider->provider links.
      if (target && !(role === 'provider' && target.type === 'capability')) {
        scalers.push(linkScaler(m, app, ownId, p.link, target));
      }
    }
  }
  // A capability without a scaler trait gets an implicit spread of one instance.
  if (role === 'provider' && !scalerSpecified && image !== undefined) {
    scalers.push(spreadScaler('SpreadScaler', role, app, c.name, ownId, image, { instances: 1, spread: [] }, configNames));
  }
  return scalers;
}

function spreadScaler(
  kind: 'SpreadScaler' | 'DaemonScaler', role: 'component' | 'provider', app: string, componentName: string,
  id: string, image: string, property: SpreadScalerProperty, configNames: string[],
): ScalerInfo {
  return {
    id: sha256Hex([kind, app, componentName, id, image, ...configNames]),
    kind, name: id, role, image, spreads: computeSpread(property),
  };
}

function linkScaler(m: Manifest, app: string, sourceId: string, link: LinkProperty, target: Component): ScalerInfo {
  const [targetApp, targetName] = resolve(m, target);
  const targetId = componentId(targetApp, target.properties.id, targetName);
  const manifestName = m.metadata.name;
  const sourceConfig = [...configIds(manifestName, link.source?.config ?? []), ...secretIds(manifestName, link.source?.secrets ?? [])];
  const targetConfig = [...configIds(manifestName, link.target.config), ...secretIds(manifestName, link.target.secrets)];
  const parts = [
    'LinkScaler', app, link.name ?? 'default', sourceId, targetId, link.namespace, link.package,
    ...link.interfaces, ...sourceConfig, ...targetConfig,
  ];
  return {
    id: sha256Hex(parts), kind: 'LinkScaler', role: 'link', image: '', spreads: [],
    name: `${sourceId} -(${link.namespace}:${link.package})-> ${targetId}`,
    link: { source: sourceId, target: targetId },
  };
}

/** Config with inline properties is created by wadm under an app-scoped name; bare names are external. */
function configIds(app: string, config: ConfigProperty[]): string[] {
  return config.map((c) => (c.properties === undefined ? c.name : componentId(app, undefined, c.name)));
}

function secretIds(app: string, secrets: SecretProperty[]): string[] {
  return secrets.map((s) => `SECRET_${componentId(app, undefined, s.name)}`);
}

/** `compute_spread`: weights (default 100) split the instances, remainders go one by one, heaviest first. */
export function computeSpread(p: SpreadScalerProperty): { name: string; count: number }[] {
  const spreads = [...p.spread].sort((a, b) => (b.weight ?? 100) - (a.weight ?? 100));
  const total = spreads.reduce((sum, s) => sum + (s.weight ?? 100), 0);
  const computed = spreads.length === 0
    ? [{ name: 'default', count: p.instances }]
    : spreads.map((s) => ({ name: s.name, count: total === 0 ? 0 : Math.floor((p.instances * (s.weight ?? 100)) / total) }));
  let missing = p.instances - computed.reduce((sum, s) => sum + s.count, 0);
  for (const s of computed) {
    if (missing <= 0) break;
    s.count += 1;
    missing -= 1;
  }
  return computed;
}

function sha256Hex(parts: string[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest('hex');
}
