// A wadm (OAM) manifest becomes a WasmCloudApplication by changing apiVersion and kind: the spec
// is the same, and wadm's annotations (version, description) keep their meaning. Small, and a module
// of its own because the CLI, the v2 converter's input and the tests all need this one mapping.
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
