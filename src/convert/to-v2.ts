// `convert --to v2`: a validated WasmCloudApplication becomes wasmCloud v2 WorkloadDeployments and a
// report of what became of every construct. Pure: no I/O, inputs never mutated, equal input gives
// equal output. The caller validates the output against src/schema/v2.ts before printing it.
import type { ValidSpec } from '../core/validate.js';
import { V2_API_VERSION, WORKLOAD_DEPLOYMENT, type WorkloadComponent, type WorkloadDeployment, type WorkloadSpec } from '../schema/v2.js';
import { metadataOf, nameFinding, policyFindings, specFieldFindings, type ApplicationMetadata } from './application.js';
import { mapComponent } from './components.js';
import { HostInterfaceList } from './host-interfaces.js';
import { mapLinks } from './links.js';
import { comparePaths, dnsName, joinName } from './names.js';
import { placementsOf, type IndexedComponent, type Placement } from './placement.js';
import { customTraitFindings, providerFindings } from './providers.js';
import { dropped, type Finding } from './report.js';

export interface V2Options {
  /** Namespace written into every resource; none leaves it to `kubectl apply -n`. */
  namespace?: string | undefined;
  /** The Host header that routes incoming HTTP to the workload (wasi:http config.host). */
  httpHost?: string | undefined;
  /** Outbound HTTP allow-list for components that import wasi:http/outgoing-handler. */
  allowHosts?: readonly string[] | undefined;
  /** Containers the wasi:blobstore hostInterface lets the workload use (config.buckets). */
  blobstoreBuckets?: readonly string[] | undefined;
  /** The spread requirement whose value selects hosts by their `hostgroup` label. */
  hostgroupFromRequirement?: string | undefined;
}

export interface V2Conversion {
  resources: WorkloadDeployment[];
  /** In source order of their field paths. */
  findings: Finding[];
}

export function convertToV2(app: ValidSpec, options: V2Options = {}): V2Conversion {
  const name = dnsName(app.ref.name);
  const { spec } = app;
  const hostInterfaces = new HostInterfaceList();
  const findings: Finding[] = [nameFinding(app, name), ...specFieldFindings(app), ...policyFindings(app)];
  const metadata = metadataOf(app);
  findings.push(...metadata.findings);

  const kept: (IndexedComponent & { workload: WorkloadComponent })[] = [];
  spec.components.forEach((component, index) => {
    findings.push(...customTraitFindings(component, index));
    if (component.type === 'capability') return;
    const context = { hostInterfaces, policies: spec.policies ?? [], secretName: joinName(name, 'secrets'), position: kept.length };
    const mapped = mapComponent({ component, index }, context);
    findings.push(...mapped.findings);
    if (mapped.kept !== undefined) kept.push(mapped.kept);
  });

  const allowHosts = options.allowHosts ?? [];
  const links = mapLinks({
    components: spec.components,
    inWorkload: new Set(kept.map((k) => k.workload.name)),
    hostInterfaces,
    httpHost: options.httpHost,
    allowHosts,
    blobstoreBuckets: options.blobstoreBuckets ?? [],
  });
  findings.push(...links.findings);
  spec.components.forEach((component, index) => {
    if (component.type === 'capability') findings.push(...providerFindings(component, index, links.providerPackages.get(component.name)));
  });
  const placement = placementsOf(kept, options.hostgroupFromRequirement);
  findings.push(...placement.findings);
  findings.sort((a, b) => comparePaths(a.path, b.path));

  if (kept.length === 0) {
    return { resources: [], findings: [...findings, dropped('spec.components', 'no component could be mapped: nothing to deploy')] };
  }
  const components = kept.map(({ workload }) =>
    links.outboundHttp.has(workload.name) && allowHosts.length > 0
      ? { ...workload, localResources: { ...workload.localResources, allowedHosts: [...allowHosts] } }
      : workload,
  );
  const interfaces = hostInterfaces.list();
  const template = (p: Placement): WorkloadSpec => ({
    ...(p.hostSelector ? { hostSelector: { ...p.hostSelector } } : {}),
    components: structuredClone(components),
    ...(interfaces.length > 0 ? { hostInterfaces: structuredClone(interfaces) } : {}),
  });
  const names = new Set<string>();
  const resources = placement.placements.map((p, i) => {
    // Two spreads may clean up to the same name: the later one takes its position too.
    const wanted = p.suffix === undefined ? name : joinName(name, p.suffix);
    const unique = names.has(wanted) ? joinName(wanted, String(i)) : wanted;
    names.add(unique);
    return deployment(unique, options.namespace, metadata, app.suspend ? 0 : p.replicas, template(p));
  });
  return { resources, findings };
}

function deployment(
  name: string,
  namespace: string | undefined,
  metadata: ApplicationMetadata,
  replicas: number,
  spec: WorkloadSpec,
): WorkloadDeployment {
  return {
    apiVersion: V2_API_VERSION,
    kind: WORKLOAD_DEPLOYMENT,
    metadata: {
      name,
      ...(namespace !== undefined ? { namespace } : {}),
      ...(metadata.labels ? { labels: { ...metadata.labels } } : {}),
      ...(metadata.annotations ? { annotations: { ...metadata.annotations } } : {}),
    },
    spec: { replicas, template: { spec } },
  };
}
