// The parts a component is made of besides its image: config and secret references, and its
// traits — how many instances where (spreadscaler, daemonscaler) and what it is linked to (link) —
// as wadm-types 0.8 defines them. Every description here becomes `kubectl explain` text.
import { Type, type Static } from '@sinclair/typebox';
import { celRules, CLOSED as closed, LIMITS, listSet, SCALER_TRAITS as SCALERS, StringEnum, StringMap, SUBJECT_TOKEN } from './kit.js';

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
// exact per-type rules are checked by src/core/components.ts with the two schemas above.
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

export type ConfigProperty = Static<typeof ConfigPropertySchema>;
export type SecretProperty = Static<typeof SecretPropertySchema>;
export type LinkProperties = Static<typeof LinkPropertiesSchema>;
export type ScalerProperties = Static<typeof ScalerPropertiesSchema>;
export type Trait = Static<typeof TraitSchema>;
