// The WasmCloudApplication spec: wadm's OAM Application spec (wadm-types 0.8) plus the few
// fields that tell us how to run it. Every description here becomes `kubectl explain` text.
import { Type, type Static } from '@sinclair/typebox';
import { ConfigPropertySchema, SecretPropertySchema, TraitSchema } from './component-parts.js';
import {
  celRules,
  CLOSED as closed,
  LIMITS,
  listMap,
  listSet,
  SCALER_TRAITS as SCALERS,
  SECRET_POLICY_TYPE,
  StringEnum,
  StringMap,
  SUBJECT_TOKEN,
} from './kit.js';

export { LIMITS };
export {
  ConfigPropertySchema,
  LinkPropertiesSchema,
  ScalerPropertiesSchema,
  SecretPropertySchema,
  TraitSchema,
} from './component-parts.js';

const SharedApplicationRefSchema = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      description: 'Name of the shared application (annotated `experimental.wasmcloud.dev/shared: "true"`).',
    }),
    component: Type.String({ minLength: 1, description: 'Name of the component in the shared application.' }),
  },
  { ...closed, description: 'Use a component of a shared application instead of starting one from an image.' },
);

export const ComponentPropertiesSchema = Type.Object(
  {
    image: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'OCI reference of the component or provider (also `file://...` and `wasmcloud+builtin://...`).',
      }),
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
    policies: Type.Optional(Type.Array(PolicySchema, { maxItems: LIMITS.items, description: 'Policies, exactly as in a wadm manifest.' })),
    lattice: Type.Optional(
      Type.String({
        pattern: SUBJECT_TOKEN,
        maxLength: 128,
        description:
          "Lattice to deploy to (letters, digits, `-` and `_`). Default: the lattice the application is in (status.lattice), or for a new one the service's DEFAULT_LATTICE. Changing it moves the application.",
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
    description: Type.Optional(Type.String({ description: "Description shown by wadm (the manifest's `description` annotation)." })),
    deletionPolicy: Type.Optional(
      StringEnum(DELETION_POLICIES, {
        default: 'Delete',
        description: 'On delete: `Delete` removes the application and all its versions from wadm; `Orphan` leaves it running.',
      }),
    ),
    suspend: Type.Optional(Type.Boolean({ default: false, description: 'Undeploy the application but keep it and its versions in wadm.' })),
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
      rule:
        'self.components.all(c, !has(c.properties.secrets) || c.properties.secrets.all(s, has(self.policies) && ' +
        `self.policies.exists(p, p.name == s.properties.policy && p.type == '${SECRET_POLICY_TYPE}' && 'backend' in p.properties)))`,
      message: `components[].properties.secrets[].properties.policy: must name a policy in spec.policies of type ${SECRET_POLICY_TYPE} with a backend property`,
    }),
  },
);
export type ApplicationSpec = Static<typeof ApplicationSpecSchema>;
export type Component = Static<typeof ComponentSchema>;
export type { ConfigProperty, LinkProperties, ScalerProperties, SecretProperty, Trait } from './component-parts.js';
