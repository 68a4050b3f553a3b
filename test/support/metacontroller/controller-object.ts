// The CompositeController object sent as `controller` in every request, in the field order Go marshals the struct.
// TypeMeta (apiVersion/kind) is left out: objects from Metacontroller's typed informer carry none.
import { randomUUID } from 'node:crypto';
import type { HookVersion, ParentResource } from './types.js';

export interface ControllerSpecInput {
  controllerName: string;
  resource: Required<ParentResource>;
  syncUrl: string;
  finalizeUrl: string | undefined;
  hookVersion: HookVersion;
  timeoutMs: number;
  /** Only an explicitly chosen mode appears in the object. */
  strict: boolean | undefined;
  resyncPeriodSeconds: number;
  createdAt: string;
}

export function buildCompositeController(input: ControllerSpecInput): Record<string, unknown> {
  const hook = (url: string): Record<string, unknown> => ({
    version: input.hookVersion,
    webhook: {
      url,
      timeout: goDuration(input.timeoutMs),
      ...(input.strict === undefined ? {} : { responseUnMarshallMode: input.strict ? 'strict' : 'loose' }),
    },
  });
  return {
    metadata: {
      name: input.controllerName,
      uid: randomUUID(),
      resourceVersion: '1',
      generation: 1,
      creationTimestamp: input.createdAt,
      managedFields: [{
        manager: 'kubectl-client-side-apply',
        operation: 'Update',
        apiVersion: 'metacontroller.k8s.io/v1alpha1',
        time: input.createdAt,
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:spec': {
            '.': {},
            'f:generateSelector': {},
            'f:hooks': { '.': {}, ...(input.finalizeUrl ? { 'f:finalize': {} } : {}), 'f:sync': {} },
            'f:parentResource': {},
            'f:resyncPeriodSeconds': {},
          },
        },
      }],
    },
    spec: {
      parentResource: { apiVersion: input.resource.apiVersion, resource: input.resource.plural },
      hooks: {
        sync: hook(input.syncUrl),
        ...(input.finalizeUrl === undefined ? {} : { finalize: hook(input.finalizeUrl) }),
      },
      resyncPeriodSeconds: input.resyncPeriodSeconds,
      generateSelector: true,
    },
    status: {},
  };
}

/** Go's time.Duration.String() for whole milliseconds: "250ms", "10s", "1.5s", "1m30s", "1h0m0s". */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = `${(ms % 60_000) / 1000}s`;
  if (hours > 0) return `${hours}h${minutes}m${seconds}`;
  if (minutes > 0) return `${minutes}m${seconds}`;
  return seconds;
}
