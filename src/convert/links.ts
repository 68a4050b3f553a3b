// Link traits. Components of one v2 workload link by interface name, with nothing to declare; a
// link to or from a well-known provider becomes a hostInterfaces entry served by a host plugin;
// anything else (custom providers, link names, per-link config and secrets) has no v2 form.
import type { Component, ConfigProperty, LinkProperties } from '../schema/application.js';
import type { HostInterface } from '../schema/v2.js';
import { hostPluginOf, pluginNoteOf, type HostInterfaceList } from './host-interfaces.js';
import { approximated, dropped, mapped, needsInput, type Finding } from './report.js';

export interface LinkContext {
  components: readonly Component[];
  /** Names of the components that made it into the workload. */
  inWorkload: ReadonlySet<string>;
  hostInterfaces: HostInterfaceList;
  httpHost: string | undefined;
  allowHosts: readonly string[];
  blobstoreBuckets: readonly string[];
}

export interface MappedLinks {
  findings: Finding[];
  /** Components that import wasi:http/outgoing-handler: they need allowedHosts. */
  outboundHttp: Set<string>;
  /** For every provider, the packages linked to it and whether a host plugin serves each. */
  providerPackages: Map<string, Map<string, boolean>>;
  /** `<source> <namespace:package/interface>` → the component that serves it inside the workload. */
  imports: Map<string, string>;
}

interface Link {
  properties: LinkProperties;
  path: string;
  source: Component;
  target: Component;
  pkg: string;
}

const LINK_NAME =
  "v2 has no link names: a second backend of one package needs `(implements <name>)` in the component's WIT and a named hostInterfaces entry";
const COMPONENT_LINK_CONFIG = 'v2 has no per-link configuration; give the component what it needs in its localResources.config';
const PROVIDER_LINK_CONFIG =
  'configured the provider for this link; v2 host plugins are configured on the host (chart values), not per link';
/** Runs all the same: one listener per host serves every workload, told apart by Host header. */
const LISTEN_ADDRESS = (address: string) =>
  `the listen address belongs to the host: start it with wash host --http-addr ${address || 'ADDR'}; v2 routes requests to the workload by Host header`;
const LINK_SECRETS = 'v2 has no per-link secrets; see wasmcloud:secrets with secretFrom';

export function mapLinks(context: LinkContext): MappedLinks {
  const result: MappedLinks = { findings: [], outboundHttp: new Set(), providerPackages: new Map(), imports: new Map() };
  context.components.forEach((source, i) => {
    (source.traits ?? []).forEach((trait, t) => {
      if (trait.type !== 'link') return;
      const properties = trait.properties as LinkProperties;
      const targetName = typeof properties.target === 'string' ? properties.target : properties.target.name;
      const target = context.components.find((c) => c.name === targetName)!; // validation guarantees it
      const link = {
        properties,
        path: `spec.components[${i}].traits[${t}]`,
        source,
        target,
        pkg: `${properties.namespace}:${properties.package}`,
      };
      result.findings.push(...mapLink(link, context, result), ...linkExtras(link));
    });
  });
  return result;
}

function mapLink(link: Link, context: LinkContext, result: MappedLinks): Finding[] {
  const { source, target, path, pkg } = link;
  const interfaces = `${pkg} (${link.properties.interfaces.join(', ')})`;
  const exporting = source.type === 'capability';
  const provider = exporting ? source : target;
  const component = exporting ? target : source;
  if (provider.type !== 'capability') {
    const missing = [source, target].find((c) => !context.inWorkload.has(c.name));
    if (missing !== undefined) return [dropped(path, `link ${interfaces} to "${target.name}": "${missing.name}" is not in the workload`)];
    return [componentLink(link, interfaces, result.imports)];
  }
  if (component.type === 'capability')
    return [dropped(path, `link ${interfaces} between two providers: v2 host plugins do not link to each other`)];
  const plugin = hostPluginOf(link.properties.namespace, link.properties.package);
  const packages = result.providerPackages.get(provider.name) ?? new Map<string, boolean>();
  result.providerPackages.set(provider.name, packages.set(pkg, plugin !== undefined));
  if (plugin === undefined) {
    return [
      dropped(
        path,
        `link ${interfaces} with provider "${provider.name}": no v2 host plugin serves ${pkg} (a custom provider); run it as a host component plugin or rewrite it as a component`,
      ),
    ];
  }
  if (!context.inWorkload.has(component.name))
    return [dropped(path, `link ${interfaces}: component "${component.name}" is not in the workload`)];
  const merged = context.hostInterfaces.ensure(hostInterfaceOf(link, context));
  const into = merged ? `merged into the one unnamed ${pkg} entry of` : '→';
  const note = pluginNoteOf(pkg);
  const served = `served by the host's ${plugin} plugin${note ? `: ${note}` : ''}`;
  const findings = [mapped(path, `link ${interfaces} ${into} spec.template.spec.hostInterfaces, ${served}`)];
  const ifaces = link.properties.interfaces;
  // v2 reads the direction from the interface, whichever end of the v1 link the provider was.
  if (pkg === 'wasi:http' && ifaces.includes('incoming-handler')) findings.push(httpHostFinding(path, context.httpHost));
  if (pkg === 'wasi:blobstore') findings.push(blobstoreBucketsFinding(path, context.blobstoreBuckets));
  if (pkg === 'wasi:http' && ifaces.includes('outgoing-handler')) {
    result.outboundHttp.add(component.name);
    findings.push(allowHostsFinding(path, component.name, context.allowHosts));
  }
  return findings;
}

/** v2 links by interface name alone: one import served by two components of a workload is an error there. */
function componentLink({ properties, path, source, target }: Link, interfaces: string, imports: Map<string, string>): Finding {
  const keys = properties.interfaces.map((iface) => `${source.name} ${properties.namespace}:${properties.package}/${iface}`);
  const other = keys.map((key) => imports.get(key)).find((name) => name !== undefined && name !== target.name);
  for (const key of keys) if (!imports.has(key)) imports.set(key, target.name);
  if (other !== undefined) {
    return needsInput(
      path,
      `link ${interfaces} to "${target.name}": "${other}" already serves it to "${source.name}", and v2 rejects two components of a workload that export what a third imports; move one into a workload of its own`,
    );
  }
  return mapped(path, `link ${interfaces} to "${target.name}": components of one workload link by interface name, nothing to declare`);
}

function hostInterfaceOf(link: Link, context: LinkContext): HostInterface {
  const { namespace, package: pkg, interfaces } = link.properties;
  const config: Record<string, string> = {};
  if (link.pkg === 'wasi:http' && interfaces.includes('incoming-handler') && context.httpHost !== undefined)
    config['host'] = context.httpHost;
  const subscriptions =
    link.pkg === 'wasmcloud:messaging' ? sourceConfigs(link.properties).find(([c]) => c.properties?.['subscriptions'])?.[0] : undefined;
  if (subscriptions?.properties !== undefined) config['subscriptions'] = subscriptions.properties['subscriptions']!;
  if (link.pkg === 'wasi:blobstore' && context.blobstoreBuckets.length > 0) config['buckets'] = context.blobstoreBuckets.join(',');
  return { namespace, package: pkg, interfaces, ...(Object.keys(config).length > 0 ? { config } : {}) };
}

function httpHostFinding(path: string, httpHost: string | undefined): Finding {
  if (httpHost !== undefined)
    return mapped(path, `config.host "${httpHost}" from --http-host: requests with this Host header reach the workload`);
  return needsInput(
    path,
    'v2 routes incoming HTTP by Host header and rejects requests without a match: pass --http-host H for the wasi:http config.host',
  );
}

/** v1's blobstore providers opened any container; v2's NATS blobstore only those in config.buckets. */
function blobstoreBucketsFinding(path: string, buckets: readonly string[]): Finding {
  if (buckets.length > 0)
    return mapped(path, `config.buckets "${buckets.join(',')}" from --blobstore-bucket: the workload may use these containers`);
  return needsInput(
    path,
    'v2\'s NATS blobstore refuses every container not listed in config.buckets (each call fails with "unauthorized"): pass --blobstore-bucket NAME (repeatable) for each container the component uses',
  );
}

function allowHostsFinding(path: string, component: string, allowHosts: readonly string[]): Finding {
  if (allowHosts.length > 0) return mapped(path, `--allow-host ${allowHosts.join(', ')} → localResources.allowedHosts of "${component}"`);
  return needsInput(
    path,
    `v2 denies outbound HTTP without an allow-list: pass --allow-host H (repeatable; "*" allows all) for localResources.allowedHosts of "${component}"`,
  );
}

function sourceConfigs(link: LinkProperties): [ConfigProperty, string][] {
  const configs: [ConfigProperty, string][] = (link.source?.config ?? []).map((c, k) => [c, `source.config[${k}]`]);
  return configs.concat((link.source_config ?? []).map((c, k) => [c, `source_config[${k}]`]));
}

function targetConfigs(link: LinkProperties): [ConfigProperty, string][] {
  const configs: [ConfigProperty, string][] = (typeof link.target === 'string' ? [] : (link.target.config ?? [])).map((c, k) => [
    c,
    `target.config[${k}]`,
  ]);
  return configs.concat((link.target_config ?? []).map((c, k) => [c, `target_config[${k}]`]));
}

/** The parts of a link beyond "who talks to whom", each with its own finding. */
function linkExtras({ properties, path, source, target, pkg }: Link): Finding[] {
  const at = `${path}.properties`;
  const findings: Finding[] = [];
  if (properties.name !== undefined && properties.name !== 'default')
    findings.push(dropped(`${at}.name`, `link name "${properties.name}": ${LINK_NAME}`));
  const configWhy = (end: Component) => (end.type === 'capability' ? PROVIDER_LINK_CONFIG : COMPONENT_LINK_CONFIG);
  for (const [config, field] of sourceConfigs(properties))
    findings.push(sourceConfigFinding(config, `${at}.${field}`, pkg, configWhy(source)));
  for (const [config, field] of targetConfigs(properties)) {
    const bucket = pkg === 'wasi:keyvalue' ? keyvalueBucketFindings(config, `${at}.${field}`, configWhy(target)) : undefined;
    findings.push(...(bucket ?? [dropped(`${at}.${field}`, `config "${config.name}": ${configWhy(target)}`)]));
  }
  const secrets = [...(properties.source?.secrets ?? []).map((_, k) => `source.secrets[${k}]`)];
  if (typeof properties.target !== 'string') secrets.push(...(properties.target.secrets ?? []).map((_, k) => `target.secrets[${k}]`));
  for (const field of secrets) findings.push(dropped(`${at}.${field}`, LINK_SECRETS));
  return findings;
}

function sourceConfigFinding(config: ConfigProperty, path: string, pkg: string, why: string): Finding {
  const keys = Object.keys(config.properties ?? {});
  if (pkg === 'wasmcloud:messaging' && keys.includes('subscriptions')) {
    const rest = keys.filter((k) => k !== 'subscriptions');
    if (rest.length === 0)
      return mapped(path, `config "${config.name}": subscriptions → the wasmcloud:messaging hostInterface's config.subscriptions`);
    return dropped(path, `config "${config.name}": subscriptions → config.subscriptions, but ${rest.join(', ')} ${why}`);
  }
  if (pkg === 'wasi:http' && keys.some(isAddress)) return listenAddressFinding(config, path, why);
  return dropped(path, `config "${config.name}"${keys.length > 0 ? ` (${keys.join(', ')})` : ''}: ${why}`);
}

const isAddress = (key: string) => key.toLowerCase() === 'address';

/** Not a loss on its own: the host's --http-addr owns the listener, which v2 cannot set per workload. */
function listenAddressFinding(config: ConfigProperty, path: string, why: string): Finding {
  const properties = config.properties ?? {};
  const key = Object.keys(properties).find(isAddress)!;
  const address = properties[key]!;
  const rest = Object.keys(properties).filter((k) => !isAddress(k));
  if (rest.length === 0) return approximated(path, `config "${config.name}" (${key} ${address}): ${LISTEN_ADDRESS(address)}`);
  return dropped(path, `config "${config.name}": ${key} → the host's --http-addr ${address}, but ${rest.join(', ')} ${why}`);
}

/** v1's keyvalue provider took its bucket from the link (BUCKET); v2 opens the one the component names. */
function keyvalueBucketFindings(config: ConfigProperty, path: string, why: string): Finding[] | undefined {
  const properties = config.properties ?? {};
  const key = Object.keys(properties).find((k) => k.toLowerCase() === 'bucket');
  if (key === undefined) return undefined;
  const bucket = properties[key];
  const rest = Object.keys(properties).filter((k) => k !== key);
  return [
    needsInput(
      path,
      `config "${config.name}" (${key} ${bucket}): v2 uses the bucket the component opens by name, not a link setting: the component must open "${bucket}" to keep v1's data, and that JetStream KV bucket must exist`,
    ),
    ...(rest.length > 0 ? [dropped(path, `config "${config.name}": ${rest.join(', ')} ${why}`)] : []),
  ];
}
