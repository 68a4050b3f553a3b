// wadm's manifest rules beyond the schema (wadm-types validate_manifest), each reported with the
// field to fix. Runs on a spec that already passed the schema.
import {
  LinkPropertiesSchema,
  ScalerPropertiesSchema,
  type ApplicationSpec,
  type Component,
  type ConfigProperty,
  type LinkProperties,
  type ScalerProperties,
  type SecretProperty,
} from '../schema/application.js';
import { SCALER_TYPES, SECRET_POLICY_TYPE } from '../schema/kit.js';
import { compile } from '../schema/validator.js';

const checkScaler = compile<ScalerProperties>(ScalerPropertiesSchema);
const checkLink = compile<LinkProperties>(LinkPropertiesSchema);
const SCALERS: readonly string[] = SCALER_TYPES;

export function checkComponents(spec: ApplicationSpec): string[] {
  const problems: string[] = [];
  const names = new Map<string, number>();
  const ids = new Map<string, number>();
  spec.components.forEach((component, i) => {
    const at = `spec.components[${i}]`;
    firstSeen(names, component.name, i, `${at}.name: duplicate component name "${component.name}"`, problems);
    if (component.properties.id !== undefined) {
      firstSeen(ids, component.properties.id, i, `${at}.properties.id: duplicate component id "${component.properties.id}"`, problems);
    }
    problems.push(...checkSource(component, at));
  });
  problems.push(...checkLinks(spec), ...checkSecrets(spec));
  return problems;
}

function firstSeen(seen: Map<string, number>, key: string, index: number, message: string, problems: string[]): void {
  const first = seen.get(key);
  if (first === undefined) seen.set(key, index);
  else problems.push(`${message} (first used by spec.components[${first}])`);
}

/** Exactly one of image/application; a shared component brings its own config, secrets and scaling. */
function checkSource(component: Component, at: string): string[] {
  const { image, application, config, secrets } = component.properties;
  if (image !== undefined && application !== undefined) return [`${at}.properties: set either image or application, not both`];
  if (image === undefined && application === undefined) return [`${at}.properties: set image or application`];
  if (application === undefined) return [];
  const problems: string[] = [];
  if (config !== undefined) problems.push(`${at}.properties.config: a shared component cannot have its own config`);
  if (secrets !== undefined) problems.push(`${at}.properties.secrets: a shared component cannot have its own secrets`);
  (component.traits ?? []).forEach((trait, t) => {
    if (SCALERS.includes(trait.type)) problems.push(`${at}.traits[${t}]: a shared component cannot have a scaler trait`);
  });
  return problems;
}

function checkLinks(spec: ApplicationSpec): string[] {
  const problems: string[] = [];
  const componentNames = new Set(spec.components.map((c) => c.name));
  const linkConfigNames = new Map<string, string>();
  spec.components.forEach((component, i) => {
    const links = new Set<string>();
    (component.traits ?? []).forEach((trait, t) => {
      const at = `spec.components[${i}].traits[${t}].properties`;
      if (SCALERS.includes(trait.type)) {
        problems.push(...checkScalerTrait(trait.properties, at));
        return;
      }
      if (trait.type !== 'link') return; // wadm ignores custom traits
      if (!checkLink(trait.properties)) {
        problems.push(...checkLink.problems(trait.properties, at));
        return;
      }
      const link = trait.properties;
      const target = typeof link.target === 'string' ? link.target : link.target.name;
      if (!componentNames.has(target)) {
        problems.push(`${at}.target: link target "${target}" is not a component of this application`);
      }
      for (const iface of link.interfaces) {
        const key = `${link.name ?? 'default'} (${link.namespace}:${link.package}/${iface})`;
        if (links.has(key)) problems.push(`${at}: duplicate link ${key} in component "${component.name}"`);
        links.add(key);
      }
      for (const [config, path] of linkConfigs(link, at)) {
        if (config.properties === undefined) continue;
        const first = linkConfigNames.get(config.name);
        if (first !== undefined) problems.push(`${path}.name: duplicate link config name "${config.name}" (first used at ${first})`);
        else linkConfigNames.set(config.name, `${path}.name`);
      }
    });
  });
  return problems;
}

function checkScalerTrait(properties: unknown, at: string): string[] {
  if (!checkScaler(properties)) return checkScaler.problems(properties, at);
  return properties.instances === undefined && properties.replicas === undefined ? [`${at}.instances: is required`] : [];
}

function linkConfigs(link: LinkProperties, at: string): [ConfigProperty, string][] {
  const target = typeof link.target === 'string' ? undefined : link.target.config;
  const lists: [ConfigProperty[] | undefined, string][] = [
    [link.source?.config, `${at}.source.config`],
    [target, `${at}.target.config`],
    [link.source_config, `${at}.source_config`],
    [link.target_config, `${at}.target_config`],
  ];
  return lists.flatMap(([list, path]) => (list ?? []).map((config, c): [ConfigProperty, string] => [config, `${path}[${c}]`]));
}

/** Every secret, of a component or of a link, must name a secret policy that has a backend. */
function checkSecrets(spec: ApplicationSpec): string[] {
  const policies = new Map((spec.policies ?? []).map((p) => [p.name, p]));
  return secretsOf(spec).flatMap(([secret, path]) => {
    const at = `${path}.properties.policy`;
    const policy = policies.get(secret.properties.policy);
    if (policy === undefined) return [`${at}: no policy named "${secret.properties.policy}" in spec.policies`];
    if (policy.type !== SECRET_POLICY_TYPE) return [`${at}: policy "${policy.name}" is not of type ${SECRET_POLICY_TYPE}`];
    if (policy.properties['backend'] === undefined) return [`${at}: policy "${policy.name}" has no "backend" property`];
    return [];
  });
}

function secretsOf(spec: ApplicationSpec): [SecretProperty, string][] {
  const found: [SecretProperty, string][] = [];
  const add = (list: SecretProperty[] | undefined, path: string) =>
    (list ?? []).forEach((secret, s) => found.push([secret, `${path}[${s}]`]));
  spec.components.forEach((component, i) => {
    add(component.properties.secrets, `spec.components[${i}].properties.secrets`);
    (component.traits ?? []).forEach((trait, t) => {
      if (trait.type !== 'link' || !checkLink(trait.properties)) return;
      const at = `spec.components[${i}].traits[${t}].properties`;
      add(trait.properties.source?.secrets, `${at}.source.secrets`);
      if (typeof trait.properties.target !== 'string') add(trait.properties.target.secrets, `${at}.target.secrets`);
    });
  });
  return found;
}
