// Shapes shared by the fake Metacontroller modules. Kubernetes objects are kept loose on purpose:
// the harness must carry whatever fields a test gives it, exactly as the API server would.

export type HookName = 'sync' | 'finalize';
export type HookVersion = 'v1' | 'v2';

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Update' | 'Apply';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: unknown[];
  managedFields?: ManagedFieldsEntry[];
  [field: string]: unknown;
}

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: unknown;
  status?: Record<string, unknown>;
  [field: string]: unknown;
}

/** What `apply` accepts: apiVersion/kind default to the parent resource, server-owned metadata is ignored. */
export interface ApplyInput {
  apiVersion?: string;
  kind?: string;
  metadata: Partial<ObjectMeta> & { name: string };
  [field: string]: unknown;
}

export interface ParentResource {
  apiVersion: string;
  kind: string;
  /** Lowercase plural; defaults to `kind.toLowerCase() + 's'`. */
  plural?: string;
}

export interface FakeMetacontrollerOptions {
  syncUrl: string;
  finalizeUrl?: string;
  controllerName?: string;
  hookVersion?: HookVersion;
  /** Go `http.Client.Timeout` of the hooks; zero or negative means 10 s, as in Metacontroller. */
  timeoutMs?: number;
  /** Extra request headers, e.g. `Authorization` (what `webhook.authorization` produces). */
  headers?: Record<string, string>;
  /** `responseUnMarshallMode: strict`; defaults to true for v2, false for v1. */
  strict?: boolean;
  /** webhook.etag.enabled: send If-None-Match with the cached ETag and apply the cached body on 304/412. */
  etag?: boolean;
  resyncPeriodSeconds?: number;
  resource: ParentResource;
  /** Clock for timestamps and Retry-After dates. */
  now?: () => Date;
}

/** The response after Go-style decoding into `CompositeHookResponse`. */
export interface DecodedResponse {
  status: Record<string, unknown> | null;
  children: unknown[] | null;
  resyncAfterSeconds: number;
  finalized: boolean;
}

export interface PassResult {
  /** Undefined when the parent no longer exists (Metacontroller swallows NotFound and calls nothing). */
  hook: HookName | undefined;
  /** Absent on transport errors and timeouts. */
  httpStatus?: number;
  response?: DecodedResponse;
  /** True when Metacontroller wrote `.status` in this pass. */
  statusChanged: boolean;
  /** True when the finalizer was added or removed in this pass (a parent write, so a watch event). */
  finalizerChanged: boolean;
  /** The error as Metacontroller words it (also the SyncError event message, after "Sync error: "). */
  error?: string;
  /** Delay of the rate-limited retry that follows an error (5 ms·2ⁿ, capped at 1000 s). */
  backoffMs?: number;
  resyncAfterSeconds?: number;
  retryAfterSeconds?: number;
  finalized?: boolean;
  /** Whether the response carried a `children` array; without one Metacontroller deletes every child. */
  childrenArray: boolean;
  /** Unknown or duplicate fields that loose decoding ignored (strict decoding fails on them instead). */
  decodeWarnings?: string[];
  /** The parent is gone after this pass. */
  removed: boolean;
}

export interface CallRecord {
  hook: HookName;
  namespace: string;
  name: string;
  httpStatus?: number;
  durationMs: number;
  requestBytes: number;
  error?: string;
}

export interface EventRecord {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  namespace: string;
  name: string;
  /** `metacontroller` for events it really records; `harness` for hook bugs only this fake points out. */
  source: 'metacontroller' | 'harness';
}

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
  [field: string]: unknown;
}
