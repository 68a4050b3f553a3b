// The WasmCloudApplication spec: wadm's OAM Application spec (wadm-types 0.8) plus the few
// fields that tell us how to run it. Every description here becomes `kubectl explain` text.
import { Type, type Static } from '@sinclair/typebox';
import { celRules, listMap, listSet, StringEnum, StringMap, SUBJECT_TOKEN } from './kit.js';

const closed = { additionalProperties: false } as const;

// Bounds that let the API server prove the CEL rules below cheap enough (it estimates a rule's cost
// from the largest lists and strings the schema allows). Far above real applications.
export const LIMITS = { components: 100, traits: 20, items: 20, interfaces: 32, name: 253 } as const;
const SCALERS = "['spreadscaler', 'daemonscaler']";
const SECRET_POLICY_TYPE = 'policy.secret.wasmcloud.dev/v1alpha1';

export const ConfigPropertySchema = Type.Object(
  {
    name: Type.String({ minLength: 1, description: 'Name of the named configuration in the lattice.' }),
    properties: Type.Optional(
      StringMap({
        description:
          'Configuration values, written to the lattice under this name. Every value must be a string: quote numbers and booleans. Leave it out when the configuration is managed outside this application (for example with `wash config put`).',
      }),
    ),
  },
  { ...closed, description: 'A named configuration for a component, provider or link.' },
);

export const SecretPropertySchema = Type.Object(
  {
    name: Type.String({ minLength: 1, description: 'Name under which the component sees the secret.' }),
    properties: Type.Object(
      {
        policy: Type.String({
          minLength: 1,
          maxLength: LIMITS.name,
          description: 'Name of a policy of type `policy.secret.wasmcloud.dev/v1alpha1` in spec.policies.',
        }),
        key: Type.String({ minLength: 1, description: 'Key of the secret in the secret backend.' }),
        field: Type.Optional(Type.String({ description: 'Field of the secret to use, when the secret has several.' })),
        version: Type.Optional(Type.String({ description: 'Version of the secret in the backend.' })),
      },
      { ...closed, description: 'Where the secret comes from.' },
    ),
  },
  { ...closed, description: 'A secret made available to a component or provider.' },
);

const SharedApplicationRefSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, description: 'Name of the shared application (annotated `experimental.wasmcloud.dev/shared: "true"`).' }),
    component: Type.String({ minLength: 1, description: 'Name of the component in the shared application.' }),
  },
  { ...closed, description: 'Use a component of a shared application instead of starting one from an image.' },
);

export const ComponentPropertiesSchema = Type.Object(
  {
    image: Type.Optional(
      Type.String({ minLength: 1, description: 'OCI reference of the component or provider (also `file://...` and `wasmcloud+builtin://...`).' }),
    ),
    application: Type.Optional(SharedApplicationRefSchema),
    id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: LIMITS.name,
        description: 'Explicit component or provider id; unique in the lattice. Default: `<app>-<component>`.',
      }),
    ),
    config: Type.Optional(Type.Array(ConfigPropertySchema, { description: 'Named configurations given to the component or provider.' })),
    secrets: Type.Optional(
      Type.Array(SecretPropertySchema, { maxItems: LIMITS.items, description: 'Secrets given to the component or provider.' }),
    ),
  },
  {
    ...closed,
    description: 'What to run: exactly one of image or application.',
    ...celRules(
      { rule: 'has(self.image) != has(self.application)', message: 'properties: set exactly one of image or application' },
      {
        rule: '!has(self.application) || (!has(self.config) && !has(self.secrets))',
        message: 'properties.application: a component of a shared application cannot have its own config or secrets',
      },
    ),
  },
);

const SpreadSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, description: 'Name of this spread.' }),
    requirements: StringMap({ description: 'Host labels a host must carry to run instances of this spread.' }),
    weight: Type.Optional(Type.Integer({ minimum: 0, description: 'Share of the instances for this spread (default 100).' })),
  },
  { ...closed, description: 'A share of the instances placed on hosts that match the requirements.' },
);

/** Properties of the `spreadscaler` and `daemonscaler` traits. */
export const ScalerPropertiesSchema = Type.Object(
  {
    instances: Type.Optional(
      Type.Integer({ minimum: 0, description: 'spreadscaler: instances in the lattice; daemonscaler: instances on every matching host.' }),
    ),
    replicas: Type.Optional(Type.Integer({ minimum: 0, description: 'Deprecated alias of instances.' })),
    spread: Type.Optional(Type.Array(SpreadSchema, { description: 'How to spread the instances across hosts.' })),
  },
  closed,
);

const LinkTargetSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, description: 'Name of the target component in spec.components.' }),
    config: Type.Optional(Type.Array(ConfigPropertySchema, { description: 'Configuration given to the target for this link.' })),
    secrets: Type.Optional(Type.Array(SecretPropertySchema, { description: 'Secrets given to the target for this link.' })),
  },
  closed,
);

const LinkSourceSchema = Type.Object(
  {
    config: Type.Optional(Type.Array(ConfigPropertySchema, { description: 'Configuration given to the source for this link.' })),
    secrets: Type.Optional(Type.Array(SecretPropertySchema, { description: 'Secrets given to the source for this link.' })),
  },
  { ...closed, description: 'Configuration and secrets given to the source of the link.' },
);

/** Properties of the `link` trait. */
export const LinkPropertiesSchema = Type.Object(
  {
    namespace: Type.String({ minLength: 1, description: 'link: WIT namespace of the interfaces, for example `wasi`.' }),
    package: Type.String({ minLength: 1, description: 'link: WIT package of the interfaces, for example `http`.' }),
    // wadm refuses a link that names an interface twice, so the API server may treat the list as a set.
    interfaces: Type.Array(Type.String({ minLength: 1 }), {
      maxItems: LIMITS.interfaces,
      ...listSet(),
      description: 'link: WIT interfaces, for example `[incoming-handler]`.',
    }),
    target: Type.Union([Type.String({ minLength: 1 }), LinkTargetSchema], {
      description: 'link: the component at the other end: `{name, config?, secrets?}`, or its name as a string (legacy form).',
    }),
    source: Type.Optional(LinkSourceSchema),
    name: Type.Optional(Type.String({ minLength: 1, description: 'link: name of the link (default `default`).' })),
    source_config: Type.Optional(Type.Array(ConfigPropertySchema, { description: 'link: deprecated form of source.config.' })),
    target_config: Type.Optional(Type.Array(ConfigPropertySchema, { description: 'link: deprecated form of target.config.' })),
  },
  closed,
);

// Kubernetes needs one structural schema for every trait's properties, so the CRD types the
// union of the known fields and keeps unknown ones (custom traits, which wadm ignores). The
// exact per-type rules are checked by src/validate.ts with the two schemas above.
const TraitPropertiesSchema = Type.Object(
  { ...ScalerPropertiesSchema.properties, ...Type.Partial(LinkPropertiesSchema).properties },
  {
    'x-kubernetes-preserve-unknown-fields': true,
    description:
      'Trait settings. spreadscaler/daemonscaler: instances, spread. link: namespace, package, interfaces, target, source, name.',
  },
);

export const TraitSchema = Type.Object(
  {
    type: Type.String({
      minLength: 1,
      maxLength: LIMITS.name,
      description: '`spreadscaler`, `daemonscaler` or `link`; wadm ignores other types.',
    }),
    properties: TraitPropertiesSchema,
  },
  {
    ...closed,
    description: 'How the component is scaled or linked.',
    ...celRules(
      {
        rule: `!(self.type in ${SCALERS}) || has(self.properties.instances) || has(self.properties.replicas)`,
        message: 'properties.instances: is required for a spreadscaler or daemonscaler',
      },
      {
        rule: "self.type != 'link' || (has(self.properties.namespace) && has(self.properties.package) && has(self.properties.interfaces))",
        message: 'properties: a link needs namespace, package and interfaces',
      },
      {
        rule: `!(self.type in ${SCALERS}) || !(has(self.properties.namespace) || has(self.properties.package) || has(self.properties.interfaces) || has(self.properties.source))`,
        message: 'properties: a spreadscaler or daemonscaler takes only instances and spread, not link settings',
      },
      {
        rule: "self.type != 'link' || !(has(self.properties.instances) || has(self.properties.replicas) || has(self.properties.spread))",
        message: 'properties: a link takes no instances, replicas or spread',
      },
    ),
  },
);

export const ComponentSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: LIMITS.name, description: 'Name of the component, unique in the application.' }),
    type: StringEnum(['component', 'capability', 'actor'] as const, {
      description: '`component` (a WebAssembly component), `capability` (a provider); `actor` is the old name of component.',
    }),
    properties: ComponentPropertiesSchema,
    // No list-map: several traits share a type (one link per target and interface set) and none has a name of its own.
    traits: Type.Optional(
      Type.Array(TraitSchema, {
        maxItems: LIMITS.traits,
        description: 'Scalers and links. A component without a scaler trait is never started.',
      }),
    ),
  },
  {
    ...closed,
    description: 'A component or capability provider of the application.',
    ...celRules({
      rule: `!has(self.properties.application) || !has(self.traits) || self.traits.all(t, !(t.type in ${SCALERS}))`,
      message: 'traits: a component of a shared application cannot have a spreadscaler or daemonscaler',
    }),
  },
);

export const PolicySchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: LIMITS.name, description: 'Name of the policy, referenced by components.' }),
    type: Type.String({
      minLength: 1,
      maxLength: LIMITS.name,
      description: 'Policy type, for example `policy.secret.wasmcloud.dev/v1alpha1`.',
    }),
    properties: StringMap({ description: 'Policy settings; a secret policy needs `backend`.' }),
  },
  { ...closed, description: 'A policy of the application, such as where its secrets come from.' },
);

export const DELETION_POLICIES = ['Delete', 'Orphan'] as const;
export const DEFAULT_REVISION_HISTORY_LIMIT = 10;

export const ApplicationSpecSchema = Type.Object(
  {
    // wadm refuses two components with one name, so the list is a map keyed by name: the API server refuses the
    // duplicate, and server-side apply merges one component's change instead of owning the whole list.
    components: Type.Array(ComponentSchema, {
      minItems: 1,
      maxItems: LIMITS.components,
      ...listMap('name'),
      description: 'Components and capability providers, exactly as in a wadm manifest.',
      ...celRules({
        rule: 'self.all(a, !has(a.properties.id) || self.filter(b, has(b.properties.id) && b.properties.id == a.properties.id).size() == 1)',
        message: 'components[].properties.id: two components have the same explicit id',
      }),
    }),
    // Policies stay an atomic list: wadm looks them up by name but does not refuse a repeated one.
    policies: Type.Optional(
      Type.Array(PolicySchema, { maxItems: LIMITS.items, description: 'Policies, exactly as in a wadm manifest.' }),
    ),
    lattice: Type.Optional(
      Type.String({
        pattern: SUBJECT_TOKEN,
        maxLength: 128,
        description: 'Lattice to deploy to (letters, digits, `-` and `_`). Default: the service\'s DEFAULT_LATTICE.',
      }),
    ),
    version: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        ...celRules({ rule: "self != 'latest'", message: 'version: "latest" is not allowed in wadm' }),
        description:
          'Pin the wadm version name. Default: a hash of the rendered manifest, so an unchanged spec never makes a new version. A pinned version cannot change content: bump it with every change.',
      }),
    ),
    description: Type.Optional(Type.String({ description: 'Description shown by wadm (the manifest\'s `description` annotation).' })),
    deletionPolicy: Type.Optional(
      StringEnum(DELETION_POLICIES, {
        default: 'Delete',
        description: 'On delete: `Delete` removes the application and all its versions from wadm; `Orphan` leaves it running.',
      }),
    ),
    suspend: Type.Optional(
      Type.Boolean({ default: false, description: 'Undeploy the application but keep it and its versions in wadm.' }),
    ),
    revisionHistoryLimit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 50,
        default: DEFAULT_REVISION_HISTORY_LIMIT,
        description:
          'Versions kept in wadm; older ones that are not deployed are deleted. wadm keeps all versions of an application in one NATS KV value, so keep this small.',
      }),
    ),
  },
  {
    ...closed,
    description: 'The wadm application (OAM Application spec) and how to run it.',
    // Link targets are checked by the service alone: target keeps wadm's legacy string form beside {name, ...},
    // so the CRD stores it untyped, and the API server gives CEL no access to untyped fields.
    ...celRules({
      rule: 'self.components.all(c, !has(c.properties.secrets) || c.properties.secrets.all(s, has(self.policies) && '
        + `self.policies.exists(p, p.name == s.properties.policy && p.type == '${SECRET_POLICY_TYPE}' && 'backend' in p.properties)))`,
      message: `components[].properties.secrets[].properties.policy: must name a policy in spec.policies of type ${SECRET_POLICY_TYPE} with a backend property`,
    }),
  },
);
export type ApplicationSpec = Static<typeof ApplicationSpecSchema>;
export type Component = Static<typeof ComponentSchema>;
export type Trait = Static<typeof TraitSchema>;
export type ConfigProperty = Static<typeof ConfigPropertySchema>;
export type SecretProperty = Static<typeof SecretPropertySchema>;
export type LinkProperties = Static<typeof LinkPropertiesSchema>;
export type ScalerProperties = Static<typeof ScalerPropertiesSchema>;
