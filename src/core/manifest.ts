// Renders a ValidSpec into the wadm manifest we put. Pure and deterministic: the version
// of an unpinned spec is a hash of this manifest, so every replica, before and after a restart,
// names the same content with the same version and an unchanged spec never makes a new one.
import type { ApplicationSpec } from '../schema/application.js';
import type { ValidSpec } from './validate.js';
import { hash } from 'node:crypto';
import { CONTENT_HASH_ANNOTATION, DESCRIPTION_ANNOTATION, OWNER_ANNOTATION, VERSION_ANNOTATION } from './names.js';
import { byCodeUnits } from './order.js';

export interface WadmManifest {
  apiVersion: 'core.oam.dev/v1beta1';
  kind: 'Application';
  metadata: { name: string; annotations: Record<string, string>; labels?: Record<string, string> };
  spec: Pick<ApplicationSpec, 'components' | 'policies'>;
}

export interface RenderedManifest {
  manifest: WadmManifest;
  version: string;
  /** sha256 of the manifest without its version: equal content, equal hash. */
  contentHash: string;
  /** The put body (JSON, sent with Content-Type: application/json). */
  body: string;
}

/** Versions we derive look like `sha-0123456789abcdef`: 64 bits, ample for one application's history. */
function hashVersion(contentHash: string): string {
  return `sha-${contentHash.slice(0, 16)}`;
}

/**
 * A version named by the hash of its own content (ours, unpinned): while it exists it holds that
 * content, whoever reads it, so what one read of it said stays true (gateway.ts).
 */
export function namedByContent(version: string, contentHash: string | null): boolean {
  return contentHash !== null && version === hashVersion(contentHash);
}

export function renderManifest(app: ValidSpec): RenderedManifest {
  const annotations: Record<string, string> = { ...app.annotations, [OWNER_ANNOTATION]: app.owner };
  if (app.spec.description !== undefined) annotations[DESCRIPTION_ANNOTATION] = app.spec.description;
  const unversioned = manifestOf(app, annotations);
  const contentHash = sha256Hex(canonicalJson(unversioned));
  const version = app.pinnedVersion ?? hashVersion(contentHash);
  const manifest = manifestOf(app, { ...annotations, [CONTENT_HASH_ANNOTATION]: contentHash, [VERSION_ANNOTATION]: version });
  return { manifest, version, contentHash, body: JSON.stringify(manifest) };
}

function manifestOf(app: ValidSpec, annotations: Record<string, string>): WadmManifest {
  const labels = Object.keys(app.labels).length > 0 ? { labels: sorted(app.labels) } : {};
  const policies = app.spec.policies !== undefined ? { policies: app.spec.policies } : {};
  return {
    apiVersion: 'core.oam.dev/v1beta1',
    kind: 'Application',
    metadata: { name: app.ref.name, annotations: sorted(annotations), ...labels },
    spec: { components: app.spec.components, ...policies },
  };
}

function sorted(map: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(map).sort(([a], [b]) => byCodeUnits(a, b)));
}

// JSON with object keys sorted at every level: equal data gives equal bytes, whatever the order
// in which Kubernetes, YAML or a user wrote the keys. Arrays keep their order (it is meaningful).
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  // One string appended to, not an array per object: this runs on every new spec (the cold path).
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i] ?? null);
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  let out = '{';
  for (const key of sortedKeys(record)) {
    const item = record[key];
    if (item === undefined) continue;
    out += (out.length === 1 ? '' : ',') + JSON.stringify(key) + ':' + canonicalJson(item);
  }
  return `${out}}`;
}

/**
 * The object's keys in Array.prototype.sort's default order (UTF-16 code units). A spec's objects
 * have a few keys each, and sort() allocates a work area on every call: insertion sort in place
 * below a handful of keys.
 */
function sortedKeys(record: Record<string, unknown>): string[] {
  const keys = Object.keys(record);
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > key; j--) keys[j + 1] = keys[j]!;
    keys[j + 1] = key;
  }
  return keys;
}

/** One-shot: crypto.hash() costs a new application less than a Hash object (issue 39's cold path round). */
function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}
