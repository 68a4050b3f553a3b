// Hook request bodies shaped like Metacontroller's: the whole parent with managedFields, the
// last-applied annotation kubectl writes, its status, and the CompositeController object.
import { wasmApp, hookRequest } from '../test/support/resources.js';
import type { HookRequest } from '../src/schema/hook.js';

export function appRequest(index: number, namespace = 'bench', lattice?: string): HookRequest {
  const app = wasmApp().inNamespace(namespace).named(`app-${index}`);
  const resource = (lattice === undefined ? app : app.inLattice(lattice)).build();
  const request = hookRequest(resource);
  const metadata = request.parent.metadata as Record<string, unknown>;
  metadata['uid'] = `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`;
  metadata['resourceVersion'] = String(1000 + index);
  metadata['creationTimestamp'] = '2026-11-30T12:00:00Z';
  metadata['finalizers'] = ['metacontroller.io/compositecontroller-wasmcloudapplication-controller'];
  metadata['annotations'] = {
    ...(metadata['annotations'] as object),
    'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({
      apiVersion: resource.apiVersion,
      kind: resource.kind,
      metadata: { name: resource.metadata.name, namespace },
      spec: resource.spec,
    }),
  };
  metadata['managedFields'] = [
    managedField(
      'kubectl-client-side-apply',
      'Update',
      '{"f:metadata":{"f:annotations":{".":{},"f:description":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:spec":{".":{},"f:components":{}}}',
    ),
  ];
  return request;
}

/** About 1 MiB of managedFields, as a parent edited by many field managers carries. */
export function withLargeManagedFields(request: HookRequest): HookRequest {
  const copy = structuredClone(request);
  const fields = (copy.parent.metadata as Record<string, unknown>)['managedFields'] as unknown[];
  const chunk = JSON.stringify(Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`f:key-${i}`, { '.': {}, 'f:value': {} }])));
  for (let i = 0; fields.length < 200; i++) fields.push(managedField(`manager-${i}`, 'Apply', chunk));
  return copy;
}

function managedField(manager: string, operation: string, fieldsV1: string) {
  return {
    manager,
    operation,
    apiVersion: 'core.wasmcloud.com/v1beta1',
    time: '2026-11-30T12:00:00Z',
    fieldsType: 'FieldsV1',
    fieldsV1: JSON.parse(fieldsV1),
  };
}
