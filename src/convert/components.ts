// A v1 component's own properties (image, id, config, secrets) become a v2 workload component and
// the workload-wide hostInterfaces that carry what v2 keeps outside the spec: named configuration
// in ConfigMaps (wasi:config configFrom) and secrets in a Secret (wasmcloud:secrets secretFrom).
import type { ApplicationSpec, Component, SecretProperty } from '../schema/application.js';
import type { WorkloadComponent } from '../schema/v2.js';
import type { HostInterfaceList } from './host-interfaces.js';
import { dnsName } from './names.js';
import type { IndexedComponent } from './placement.js';
import { approximated, dropped, mapped, needsInput, type Finding } from './report.js';

export type Policy = NonNullable<ApplicationSpec['policies']>[number];

export interface ComponentContext {
  hostInterfaces: HostInterfaceList;
  policies: readonly Policy[];
  /** The Secret that holds every secret of the application's components. */
  secretName: string;
  /** Index the component takes in spec.template.spec.components. */
  position: number;
}

export interface MappedComponent {
  kept: (IndexedComponent & { workload: WorkloadComponent }) | undefined;
  findings: Finding[];
}

export function mapComponent({ component, index }: IndexedComponent, context: ComponentContext): MappedComponent {
  const at = `spec.components[${index}]`;
  const { image, application, id } = component.properties;
  if (application !== undefined) {
    const why = `shared component "${application.component}" of application "${application.name}": v2 has no shared applications, add the component with its own image`;
    return { kept: undefined, findings: [dropped(`${at}.properties.application`, why)] };
  }
  if (image === undefined || !isOciReference(image)) {
    const why = `image ${JSON.stringify(image)}: v2 hosts pull components from OCI registries only; push it and add it to spec.template.spec.components`;
    return { kept: undefined, findings: [dropped(`${at}.properties.image`, why)] };
  }
  const target = `spec.template.spec.components[${context.position}]`;
  const findings = [mapped(at, `component "${component.name}" (${image}) → ${target}`)];
  if (id !== undefined)
    findings.push(dropped(`${at}.properties.id`, `id "${id}": v2 has no component ids, a component is known by its name in the workload`));
  const config = configOf(component, at, target, context, findings);
  findings.push(...secretsOf(component, at, context));
  const workload: WorkloadComponent = { name: component.name, image, ...(config ? { localResources: { config } } : {}) };
  return { kept: { component, index, workload }, findings };
}

/** wadm pulls from OCI registries and also reads `file://` paths and its built-in providers. */
function isOciReference(image: string): boolean {
  return !/^[a-z][a-z0-9+.-]*:\/\//i.test(image) || /^oci:\/\//i.test(image);
}

function configOf(
  component: Component,
  at: string,
  target: string,
  context: ComponentContext,
  findings: Finding[],
): Record<string, string> | undefined {
  const merged: Record<string, string> = {};
  const setBy = new Map<string, string>();
  (component.properties.config ?? []).forEach((config, c) => {
    const path = `${at}.properties.config[${c}]`;
    if (config.properties === undefined) {
      const configMap = dnsName(config.name, 'config');
      context.hostInterfaces.ensure({ namespace: 'wasi', package: 'config', interfaces: ['store'], configFrom: [{ name: configMap }] });
      findings.push(
        needsInput(
          path,
          `named config "${config.name}" lives outside the application: create ConfigMap "${configMap}" with its values; the wasi:config hostInterface lists it in configFrom (every component of the workload sees it)`,
        ),
      );
      return;
    }
    const overridden = Object.keys(config.properties).filter((key) => setBy.has(key));
    for (const [key, value] of Object.entries(config.properties)) {
      merged[key] = value;
      setBy.set(key, path);
    }
    if (overridden.length === 0) findings.push(mapped(path, `config "${config.name}" → ${target}.localResources.config`));
    else
      findings.push(
        approximated(
          path,
          `config "${config.name}" merged into ${target}.localResources.config; it overrides ${overridden.join(', ')} set by an earlier config`,
        ),
      );
  });
  return Object.keys(merged).length > 0 ? merged : undefined;
}

function secretsOf(component: Component, at: string, context: ComponentContext): Finding[] {
  return (component.properties.secrets ?? []).map((secret, s) => {
    context.hostInterfaces.ensure({
      namespace: 'wasmcloud',
      package: 'secrets',
      // The host's wasmcloud:secrets has both: store hands out a secret, reveal reads its value.
      interfaces: ['store', 'reveal'],
      secretFrom: [{ name: context.secretName }],
    });
    return needsInput(
      `${at}.properties.secrets[${s}]`,
      `secret "${secret.name}": create Secret "${context.secretName}" with key "${secret.name}" holding ${source(secret, context.policies)}; the wasmcloud:secrets hostInterface reads it through secretFrom (the component must import v2's wasmcloud:secrets store and reveal)`,
    );
  });
}

function source(secret: SecretProperty, policies: readonly Policy[]): string {
  const { policy, key, field, version } = secret.properties;
  const backend = policies.find((p) => p.name === policy)?.properties['backend'] ?? policy;
  const details = [field !== undefined ? `field "${field}"` : '', version !== undefined ? `version "${version}"` : ''].filter(Boolean);
  return `key "${key}"${details.length > 0 ? ` (${details.join(', ')})` : ''} of backend "${backend}"`;
}
