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
