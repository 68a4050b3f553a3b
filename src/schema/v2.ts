// wasmCloud v2 resources (group runtime.wasmcloud.dev/v1alpha1), as `convert --to v2` writes them.
// Our own schema of the runtime-operator's documented API (api/runtime/v1alpha1 and the CRDs of
// charts/runtime-operator, wasmCloud/wasmCloud at 7cd553c), restricted to the fields we write (and
// the few status fields the CRD's /scale subresource and printer columns read, see v2-crd.ts).
// Objects are closed: no v2 CRD preserves unknown fields, so anything else would be pruned by the
// API server without a word, and we would rather fail before printing.
import { Type, type Static } from '@sinclair/typebox';
import { celRules, StringEnum, StringMap } from './kit.js';

const closed = { additionalProperties: false } as const;

export const V2_GROUP = 'runtime.wasmcloud.dev';
export const V2_VERSION = 'v1alpha1';
export const V2_API_VERSION = `${V2_GROUP}/${V2_VERSION}`;
export const WORKLOAD_DEPLOYMENT = 'WorkloadDeployment';

/** A DNS-1123 subdomain: what Kubernetes requires of object names. */
export const DNS_SUBDOMAIN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
const DNS_LABEL = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
/** The operator's admission pattern for one allowedHosts entry (`*`, `host[:port]`, `scheme://host[:port]`, `*.suffix`). */
export const ALLOWED_HOST =
  '^\\*$|^([A-Za-z][A-Za-z0-9+.-]*://)(\\*\\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*(:[0-9]{1,5})?/?$|^(\\*\\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*(:[0-9]{1,5})?$';

export const LocalObjectReferenceSchema = Type.Object(
  { name: Type.String({ pattern: DNS_SUBDOMAIN, maxLength: 253, description: 'Name of the object in the same namespace.' }) },
  { ...closed, description: 'A ConfigMap or Secret in the namespace of the workload.' },
);

const References = (what: string) =>
  Type.Optional(Type.Array(LocalObjectReferenceSchema, { description: `${what}; their keys and values are merged, the last one wins.` }));

export const HostInterfaceSchema = Type.Object(
  {
    name: Type.Optional(
      Type.String({ pattern: '^[a-z0-9][a-z0-9-]*$', maxLength: 64, description: 'Tells apart entries of one namespace:package.' }),
    ),
    namespace: Type.String({ minLength: 1, maxLength: 128, description: 'WIT namespace, for example `wasi`.' }),
    package: Type.String({ minLength: 1, maxLength: 128, description: 'WIT package, for example `http`.' }),
    interfaces: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, description: 'WIT interfaces of the package.' }),
    version: Type.Optional(Type.String({ maxLength: 64, description: 'WIT package version.' })),
    config: Type.Optional(StringMap({ description: 'Settings of the host plugin for this workload (HTTP: `host`).' })),
    configFrom: References('ConfigMaps whose data joins config'),
    secretFrom: References('Secrets whose data joins config'),
  },
  { ...closed, description: 'An interface the host provides to the workload (a host plugin).' },
);

export const LocalResourcesSchema = Type.Object(
  {
    config: Type.Optional(StringMap({ description: 'Configuration the component reads through wasi:config.' })),
    allowedHosts: Type.Optional(
      Type.Array(Type.String({ pattern: ALLOWED_HOST }), { description: 'Outbound HTTP allow-list; empty denies every request.' }),
    ),
  },
  { ...closed, description: 'What the host makes available to this component only.' },
);

export const WorkloadComponentSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, description: 'Name of the component, unique in the workload.' }),
    image: Type.String({ minLength: 1, description: 'OCI reference of the component.' }),
    localResources: Type.Optional(LocalResourcesSchema),
  },
  { ...closed, description: 'A WebAssembly component of the workload.' },
);

// The runtime-operator's two admission rules on hostInterfaces (since 2.5), in our words; the API
// server runs them, hostInterfaceProblems() below is the same rule for our own check. `namespace`
// and `package` are CEL keywords, hence __namespace__ and __package__. A name cannot be empty.
const orEmpty = (entry: string, field: string) => `(has(${entry}.${field}) ? ${entry}.${field} : '')`;
const samePackage = 'b.__namespace__ == a.__namespace__ && b.__package__ == a.__package__';
export const HOST_INTERFACE_RULES = [
  {
    rule: `self.all(a, self.filter(b, ${samePackage} && ${orEmpty('b', 'name')} == ${orEmpty('a', 'name')} && ${orEmpty('b', 'version')} == ${orEmpty('a', 'version')}).size() == 1)`,
    message: 'two entries with the same namespace, package, name and version',
  },
  {
    rule: `self.all(a, has(a.name) || self.filter(b, !has(b.name) && ${samePackage}).size() == 1)`,
    message: 'at most one unnamed entry per namespace:package; merge them or name one',
  },
];

export const WorkloadSpecSchema = Type.Object(
  {
    hostSelector: Type.Optional(StringMap({ description: 'Labels a host must carry to run the workload.' })),
    components: Type.Array(WorkloadComponentSchema, { minItems: 1, description: 'Components; they link to each other by interface name.' }),
    hostInterfaces: Type.Optional(
      Type.Array(HostInterfaceSchema, {
        maxItems: 64,
        description: 'Host interfaces; at most one unnamed entry per namespace:package (runtime-operator >= 2.5).',
        ...celRules(...HOST_INTERFACE_RULES),
      }),
    ),
  },
  { ...closed, description: 'What one replica runs; all of it is placed on one host.' },
);

export const WorkloadDeploymentSpecSchema = Type.Object(
  {
    replicas: Type.Integer({ minimum: 0, maximum: 2147483647, description: 'Copies of the workload, each on one host.' }),
    template: Type.Object({ spec: WorkloadSpecSchema }, { ...closed, description: 'The workload every replica runs.' }),
  },
  { ...closed, description: 'How many replicas of which workload.' },
);

export const WorkloadDeploymentSchema = Type.Object(
  {
    apiVersion: StringEnum([V2_API_VERSION] as const),
    kind: StringEnum([WORKLOAD_DEPLOYMENT] as const),
    metadata: Type.Object(
      {
        name: Type.String({ pattern: DNS_SUBDOMAIN, maxLength: 253 }),
        namespace: Type.Optional(Type.String({ pattern: DNS_LABEL, maxLength: 63 })),
        labels: Type.Optional(StringMap()),
        annotations: Type.Optional(StringMap()),
      },
      closed,
    ),
    spec: WorkloadDeploymentSpecSchema,
  },
  { ...closed, description: 'Runs and scales a workload across wasmCloud v2 hosts.' },
);

const V2ConditionSchema = Type.Object(
  {
    type: Type.String({ description: 'Condition type, for example Ready.' }),
    status: Type.String({ description: 'True, False or Unknown.' }),
    reason: Type.Optional(Type.String({ description: 'Machine-readable reason.' })),
    message: Type.Optional(Type.String({ description: 'What is going on, for humans.' })),
    lastTransitionTime: Type.Optional(Type.String({ format: 'date-time', description: 'When status last changed.' })),
    observedGeneration: Type.Optional(Type.Integer({ description: 'metadata.generation the condition was computed from.' })),
  },
  { description: 'A condition of the deployment.' },
);

/** What the runtime-operator writes that the CRD's /scale subresource and printer columns read; we never write it. */
export const WorkloadDeploymentStatusSchema = Type.Object(
  {
    currentReplicas: Type.Optional(Type.Integer({ minimum: 0, description: 'Replicas running now; the /scale status replicas.' })),
    selector: Type.Optional(Type.String({ description: 'Label selector of the replicas; the /scale selector (an HPA needs one).' })),
    conditions: Type.Optional(Type.Array(V2ConditionSchema, { description: 'Conditions; Ready is the READY column.' })),
  },
  { description: 'Observed state, written by the runtime-operator.' },
);

export type HostInterface = Static<typeof HostInterfaceSchema>;
export type WorkloadComponent = Static<typeof WorkloadComponentSchema>;
export type WorkloadSpec = Static<typeof WorkloadSpecSchema>;
export type WorkloadDeployment = Static<typeof WorkloadDeploymentSchema>;

/**
 * The operator's two CEL rules on hostInterfaces, which JSON Schema cannot say: no two entries
 * alike (namespace, package, name, version), and at most one unnamed entry per namespace:package.
 */
export function hostInterfaceProblems(entries: readonly HostInterface[], at: string): string[] {
  const problems: string[] = [];
  const identities = new Set<string>();
  const unnamed = new Set<string>();
  entries.forEach((entry, i) => {
    const pkg = `${entry.namespace}:${entry.package}`;
    const identity = JSON.stringify([entry.namespace, entry.package, entry.name ?? '', entry.version ?? '']);
    if (identities.has(identity)) problems.push(`${at}[${i}]: duplicates an earlier entry of ${pkg}`);
    identities.add(identity);
    if ((entry.name ?? '') !== '') return;
    if (unnamed.has(pkg)) problems.push(`${at}[${i}]: a second unnamed entry of ${pkg}; merge them or name one`);
    unnamed.add(pkg);
  });
  return problems;
}
