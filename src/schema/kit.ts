// Small builders for schemas that must be valid both as JSON Schema (Ajv validates requests
// with them) and as Kubernetes structural schema (the CRD is generated from them).
import { Type, type TUnsafe, type SchemaOptions } from '@sinclair/typebox';

/** A string enum. Type.Union of literals would emit `anyOf`+`const`, which a CRD rejects. */
export function StringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] });
}

/** map<string,string>: wadm rejects any non-string value in labels, annotations, config and requirements. */
export function StringMap(options: SchemaOptions = {}): TUnsafe<Record<string, string>> {
  return Type.Unsafe<Record<string, string>>({ ...options, type: 'object', additionalProperties: { type: 'string' } });
}

/** A free-form object that Kubernetes must store as given (no pruning). */
export function OpenObject(options: SchemaOptions = {}): TUnsafe<Record<string, unknown>> {
  return Type.Unsafe<Record<string, unknown>>({ ...options, type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
}

/** One NATS subject token, as wadm requires of app names and lattice ids (ASCII `\w`, no dots). */
export const SUBJECT_TOKEN = '^[-\\w]+$';
const SUBJECT_TOKEN_PATTERN = new RegExp(SUBJECT_TOKEN);

/** The one subject-token rule: wadm's API subjects, and so application and lattice names, are made of them. */
export function isSubjectToken(value: string): boolean {
  return SUBJECT_TOKEN_PATTERN.test(value);
}

/** The trait types wadm scales a component with. */
export const SCALER_TYPES = ['spreadscaler', 'daemonscaler'] as const;

/** The policy type that names a secrets backend in wadm. */
export const SECRET_POLICY_TYPE = 'policy.secret.wasmcloud.dev/v1alpha1';

/** A CEL rule the API server checks at `kubectl apply` (CRD `x-kubernetes-validations`). */
export interface CelRule {
  rule: string;
  /** Shown after the field path of the node that holds the rule: name the offending field in it. */
  message: string;
}

/** Schema options carrying CEL rules; Ajv ignores them (the service has its own checks). */
export function celRules(...rules: CelRule[]): { 'x-kubernetes-validations': CelRule[] } {
  return { 'x-kubernetes-validations': rules };
}

/**
 * Options of a list whose items are unique by `keys`: server-side apply then merges it item by item
 * (`x-kubernetes-list-type: map`), and the API server refuses two items with the same keys.
 */
export function listMap(...keys: [string, ...string[]]): { 'x-kubernetes-list-type': 'map'; 'x-kubernetes-list-map-keys': string[] } {
  return { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': keys };
}

/** Options of a list of unique scalars (`x-kubernetes-list-type: set`): duplicates are refused. */
export function listSet(): { 'x-kubernetes-list-type': 'set' } {
  return { 'x-kubernetes-list-type': 'set' };
}

/** Objects of the spec refuse unknown fields: a typo must be an error, not a silently ignored key. */
export const CLOSED = { additionalProperties: false } as const;

// Bounds that let the API server prove the CEL rules cheap enough (it estimates a rule's cost from
// the largest lists and strings the schema allows). Far above real applications.
export const LIMITS = { components: 100, traits: 20, items: 20, interfaces: 32, name: 253 } as const;

/** The scaler trait types, as a CEL list literal. */
export const SCALER_TRAITS = `[${SCALER_TYPES.map((type) => `'${type}'`).join(', ')}]`;
