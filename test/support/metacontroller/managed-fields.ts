// managedFields entries like the API server writes them, so request bodies carry what a real parent carries.
// Ownership transfer between managers is not modelled: each manager's entry lists what it last wrote.
import type { ManagedFieldsEntry } from './types.js';
import { isPlainObject } from './json.js';

/** FieldsV1 of a value: maps list their members (with "." for the map itself); lists and scalars are atomic. */
export function fieldsV1(value: unknown, withSelf = true): Record<string, unknown> {
  if (!isPlainObject(value)) return {};
  const out: Record<string, unknown> = withSelf ? { '.': {} } : {};
  for (const key of Object.keys(value).sort()) out[`f:${key}`] = fieldsV1(value[key]);
  return out;
}

/** Finalizers are a set: members are keyed by value. */
export function finalizerFields(finalizers: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = { '.': {} };
  for (const finalizer of [...finalizers].sort()) out[`v:${JSON.stringify(finalizer)}`] = {};
  return out;
}

/** Fields a client owns when it writes the main resource: user metadata and every non-status body field. */
export function bodyFields(obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const metadata = isPlainObject(obj['metadata']) ? obj['metadata'] : {};
  const meta: Record<string, unknown> = {};
  for (const key of ['annotations', 'labels']) {
    if (isPlainObject(metadata[key])) meta[`f:${key}`] = fieldsV1(metadata[key]);
  }
  if (Array.isArray(metadata['finalizers'])) meta['f:finalizers'] = finalizerFields(metadata['finalizers'] as string[]);
  if (Object.keys(meta).length > 0) out['f:metadata'] = meta;
  for (const key of Object.keys(obj).sort()) {
    if (['apiVersion', 'kind', 'metadata', 'status'].includes(key)) continue;
    out[`f:${key}`] = fieldsV1(obj[key]);
  }
  return out;
}

/** Replaces the entry of the same manager, operation and subresource, or appends one. */
export function upsertManagedFields(
  entries: readonly ManagedFieldsEntry[] | undefined,
  entry: ManagedFieldsEntry,
): ManagedFieldsEntry[] {
  const same = (e: ManagedFieldsEntry): boolean =>
    e.manager === entry.manager && e.operation === entry.operation && e.subresource === entry.subresource;
  const list = [...(entries ?? [])];
  const index = list.findIndex(same);
  if (index === -1) list.push(entry);
  else list[index] = entry;
  return list;
}
