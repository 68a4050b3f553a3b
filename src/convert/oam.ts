// A wadm (OAM) manifest becomes a WasmCloudApplication by changing apiVersion and kind: the spec
// is the same, and wadm's annotations (version, description) keep their meaning. Small, and a module
// of its own because the CLI, the v2 converter's input and the tests all need this one mapping.
import { ADOPT_ANNOTATION, VERSION_ANNOTATION } from '../core/names.js';

export const API_VERSION = 'core.wasmcloud.com/v1beta1';
export const KIND = 'WasmCloudApplication';

interface OamManifest {
  metadata?: { name?: unknown; annotations?: unknown; labels?: unknown };
  spec?: unknown;
}

export function convertManifest(manifest: OamManifest, namespace?: string): Record<string, unknown> {
  const metadata: Record<string, unknown> = { name: manifest.metadata?.name };
  if (namespace !== undefined) metadata['namespace'] = namespace;
  if (manifest.metadata?.annotations !== undefined) metadata['annotations'] = manifest.metadata.annotations;
  if (manifest.metadata?.labels !== undefined) metadata['labels'] = manifest.metadata.labels;
  return { apiVersion: API_VERSION, kind: KIND, metadata, spec: manifest.spec };
}

/**
 * The resource that takes over what `wash app deploy` left running: annotated to adopt, in the
 * lattice it runs in, and without the manifest's pinned version. wadm never puts a version twice,
 * and the one wash put carries no owner, so the hook puts the same content under a version named
 * by its hash and deploys that: wadm keeps every scaler whose component is unchanged, so nothing
 * that runs is stopped. Returns the resource and the version it no longer pins, if any.
 */
export function adoptingResource(
  manifest: OamManifest,
  namespace: string | undefined,
  lattice: string,
): { resource: Record<string, unknown>; unpinned?: string } {
  const resource = convertManifest(manifest, namespace);
  const metadata = resource['metadata'] as { annotations?: unknown };
  const { [VERSION_ANNOTATION]: pinned, ...kept } = isRecord(metadata.annotations) ? metadata.annotations : {};
  metadata.annotations = { ...kept, [ADOPT_ANNOTATION]: 'true' };
  resource['spec'] = { lattice, ...(isRecord(resource['spec']) ? resource['spec'] : {}) };
  return typeof pinned === 'string' ? { resource, unpinned: pinned } : { resource };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
