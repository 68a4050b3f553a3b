// Types of the fake wadm: the wire shapes of reference §2 and the typed manifest model that
// mirrors wadm-types 0.8.3 (`crates/wadm-types/src/lib.rs`) closely enough to validate,
// re-serialize and turn into scalers the way wadm does.

export type WadmOp = 'put' | 'get' | 'list' | 'versions' | 'del' | 'deploy' | 'undeploy' | 'status' | 'history';

export type StatusType = 'waiting' | 'undeployed' | 'reconciling' | 'deployed' | 'failed' | 'unhealthy';

/** `message` is omitted when empty, like serde's `skip_serializing_if = "String::is_empty"`. */
export interface StatusInfo { type: StatusType; message?: string }

export interface ScalerStatus { id: string; kind: string; name: string; status: StatusInfo }

/** The bare status payload of `wadm.status.{lattice}.{name}`; `scalers` is omitted when empty. */
export interface Status { status: StatusInfo; scalers?: ScalerStatus[]; version: string; components: unknown[] }

/** A JSON object with keys in the order wadm (serde) writes them. */
export type WireObject = Record<string, unknown>;

// ---- typed manifest ---------------------------------------------------------------------------

export type StringMap = Map<string, string>;

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; annotations: StringMap; labels: StringMap };
  spec: { components: Component[]; policies: Policy[] };
}

export interface Policy { name: string; properties: StringMap; type: string }

export interface Component {
  name: string;
  /** `actor` is accepted on input and stored as `component`. */
  type: 'component' | 'capability';
  properties: ComponentProperties;
  traits: Trait[] | undefined;
}

export interface SharedRef { name: string; component: string }

export interface ComponentProperties {
  image: string | undefined;
  application: SharedRef | undefined;
  id: string | undefined;
  config: ConfigProperty[];
  secrets: SecretProperty[];
}

export interface ConfigProperty { name: string; properties: StringMap | undefined }

export interface SecretProperty {
  name: string;
  properties: { policy: string; key: string; field: string | undefined; version: string | undefined };
}

export interface Trait { type: string; properties: TraitProperty }

/** wadm's untagged `TraitProperty`: tried as Link, then SpreadScaler, else kept as Custom JSON. */
export type TraitProperty =
  | { kind: 'link'; link: LinkProperty }
  | { kind: 'scaler'; scaler: SpreadScalerProperty }
  | { kind: 'custom'; value: unknown };

export interface ConfigDefinition { config: ConfigProperty[]; secrets: SecretProperty[] }

export interface LinkProperty {
  namespace: string;
  package: string;
  interfaces: string[];
  source: ConfigDefinition | undefined;
  target: { name: string; config: ConfigProperty[]; secrets: SecretProperty[] };
  name: string | undefined;
}

export interface SpreadScalerProperty { instances: number; spread: Spread[] }

export interface Spread { name: string; requirements: StringMap; weight: number | undefined }

export const VERSION_ANNOTATION = 'version';
export const DESCRIPTION_ANNOTATION = 'description';
export const SHARED_ANNOTATION = 'experimental.wasmcloud.dev/shared';
export const SECRET_POLICY_TYPE = 'policy.secret.wasmcloud.dev/v1alpha1';

export function manifestVersion(m: Manifest): string {
  return m.metadata.annotations.get(VERSION_ANNOTATION) ?? '';
}

/** Rust's `"true".parse::<bool>()`: only the exact words count. */
export function isShared(m: Manifest): boolean {
  return m.metadata.annotations.get(SHARED_ANNOTATION) === 'true';
}
