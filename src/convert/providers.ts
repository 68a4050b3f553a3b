// Capability providers. v2 has no providers: hosts serve capabilities through plugins configured
// on the host, so a well-known provider is replaced by the plugin its links name, and nothing of
// the provider itself (image, id, config, secrets, scaler) is deployed.
import type { Component } from '../schema/application.js';
import { dropped, mapped, type Finding } from './report.js';

const PROVIDER_SETTINGS = 'v2 host plugins are configured on the host (chart values), not by the workload';

/** `packages`: every namespace:package linked to this provider, and whether a host plugin serves it. */
export function providerFindings(provider: Component, index: number, packages: ReadonlyMap<string, boolean> | undefined): Finding[] {
  const at = `spec.components[${index}]`;
  const served = [...(packages ?? [])].filter(([, plugin]) => plugin).map(([pkg]) => pkg);
  const custom = [...(packages ?? [])].filter(([, plugin]) => !plugin).map(([pkg]) => pkg);
  const shared = provider.properties.application;
  const what = shared
    ? `shared provider "${shared.component}" of application "${shared.name}"`
    : `provider "${provider.name}" (${provider.properties.image})`;
  const findings: Finding[] = [];
  if (served.length > 0) findings.push(mapped(at, `${what} → the host's plugin for ${served.join(', ')}; nothing to deploy`));
  if (custom.length > 0)
    findings.push(
      dropped(at, `${what}: no v2 host plugin serves ${custom.join(', ')}; run it as a host component plugin or rewrite it as a component`),
    );
  if (packages === undefined)
    findings.push(dropped(at, `${what}: no component links to it, and v2 has no providers (hosts serve capabilities through plugins)`));
  const { id, config, secrets } = provider.properties;
  if (id !== undefined) findings.push(dropped(`${at}.properties.id`, `provider id "${id}": v2 has no providers`));
  (config ?? []).forEach((c, k) => findings.push(dropped(`${at}.properties.config[${k}]`, `config "${c.name}": ${PROVIDER_SETTINGS}`)));
  (secrets ?? []).forEach((s, k) => findings.push(dropped(`${at}.properties.secrets[${k}]`, `secret "${s.name}": ${PROVIDER_SETTINGS}`)));
  (provider.traits ?? []).forEach((trait, t) => {
    if (trait.type === 'spreadscaler' || trait.type === 'daemonscaler') {
      findings.push(
        dropped(`${at}.traits[${t}]`, `${trait.type} of a provider: host plugins run on every host, placement follows the workload`),
      );
    }
  });
  return findings;
}

/** Traits wadm ignores (anything but scalers and links) are reported once each, for every component. */
export function customTraitFindings(component: Component, index: number): Finding[] {
  return (component.traits ?? []).flatMap((trait, t) =>
    ['spreadscaler', 'daemonscaler', 'link'].includes(trait.type)
      ? []
      : [dropped(`spec.components[${index}].traits[${t}]`, `trait "${trait.type}": wadm ignores it, and v2 has no traits`)],
  );
}
