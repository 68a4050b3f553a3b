// The parent store of the Metacontroller emulator, and its in-memory implementation for the fast tiers. The
// in-memory API server keeps the server-side rules a hook can observe: uid, a new resourceVersion on every real
// write (no-op writes are skipped), generation bumped only by body changes and by the start of deletion, status
// ignored on main-resource writes, finalizer-gated deletion, resourceVersion preconditions.
// test/kube/metacontroller.test.ts checks these rules against kube-apiserver, which also does what is left out here (managedFields, schema
// validation, list merging).
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  managedFields?: { manager: string; operation: string; subresource?: string }[];
  [field: string]: unknown;
}

/** Kubernetes objects are kept loose: the store carries whatever fields a test gives it, as the API server does. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  status?: Record<string, unknown>;
  [field: string]: unknown;
}

/** What `apply` accepts: apiVersion and kind default to the parent resource's, server-owned metadata is ignored. */
export type ApplyInput = Omit<K8sObject, 'apiVersion' | 'kind' | 'metadata'> & {
  apiVersion?: string;
  kind?: string;
  metadata: Partial<ObjectMeta> & { name: string };
};

export interface ParentResource {
  apiVersion: string;
  kind: string;
  /** Lowercase plural; defaults to `kind.toLowerCase() + 's'`. */
  plural?: string;
  /** false for a cluster-scoped resource: its objects have no namespace (the emulator's calls take `''`). */
  namespaced?: boolean;
}

export class ApiError extends Error {
  constructor(
    readonly code: 404 | 409 | 422,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface WriteResult {
  /** The object after the write; undefined once it is gone. */
  object: K8sObject | undefined;
  changed: boolean;
  removed: boolean;
}

type Maybe<T> = T | Promise<T>;

/** What the emulator needs of an API server: a cache (Metacontroller's informer), live reads, and its writes. */
export interface ParentStore {
  /** From the cache. */
  get(namespace: string, name: string): K8sObject | undefined;
  /** A live GET, which also refreshes the cache. */
  read(namespace: string, name: string): Maybe<K8sObject | undefined>;
  /** Create, or update the way `kubectl apply` does for one field manager. */
  apply(input: ApplyInput): Maybe<K8sObject>;
  /** Without finalizers the object goes at once; with them it is marked deleting. */
  delete(namespace: string, name: string): Maybe<WriteResult>;
  /** PUT /status, failing with 409 unless the stored object has `resourceVersion` (when given). */
  updateStatus(
    namespace: string,
    name: string,
    status: Record<string, unknown>,
    options?: { fieldManager?: string; resourceVersion?: string },
  ): Maybe<WriteResult>;
  /** A metadata update of the finalizer list, retried on conflict like Metacontroller's AtomicUpdate. */
  updateFinalizers(namespace: string, name: string, edit: (finalizers: string[]) => string[]): Maybe<WriteResult>;
}

const USER_METADATA = ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const;
const NOT_BODY = new Set(['apiVersion', 'kind', 'metadata', 'status']);

export class FakeApiServer implements ParentStore {
  private readonly objects = new Map<string, K8sObject>();
  private revision = 1000;

  constructor(private readonly resource: ParentResource) {}

  apply(input: ApplyInput): K8sObject {
    const namespace = this.resource.namespaced === false ? '' : (input.metadata.namespace ?? 'default');
    const existing = this.objects.get(`${namespace}/${input.metadata.name}`);
    const { apiVersion, kind } = this.resource;
    const next: K8sObject = existing
      ? { apiVersion, kind, metadata: structuredClone(existing.metadata), ...(existing.status ? { status: existing.status } : {}) }
      : {
          apiVersion,
          kind,
          metadata: {
            name: input.metadata.name,
            ...(namespace === '' ? {} : { namespace }),
            uid: randomUUID(),
            generation: 1,
            creationTimestamp: rfc3339(),
          },
        };
    for (const [key, value] of Object.entries(input)) if (!NOT_BODY.has(key)) next[key] = structuredClone(value);
    for (const key of USER_METADATA)
      if (!existing || key in input.metadata) setOrDrop(next.metadata, key, structuredClone(input.metadata[key]));
    if (existing && !isDeepStrictEqual(body(existing), body(next))) next.metadata.generation = (next.metadata.generation ?? 0) + 1;
    return this.commit(existing, next).object ?? next;
  }

  get(namespace: string, name: string): K8sObject | undefined {
    const obj = this.objects.get(`${namespace}/${name}`);
    return obj && structuredClone(obj);
  }

  /** The store is its own cache: a live read is a cached one. */
  read(namespace: string, name: string): K8sObject | undefined {
    return this.get(namespace, name);
  }

  /** Custom resources have no graceful deletion: with finalizers the object is marked, else it goes at once. */
  delete(namespace: string, name: string): WriteResult {
    const existing = this.mustGet(namespace, name);
    if ((existing.metadata.finalizers ?? []).length === 0) {
      this.objects.delete(`${namespace}/${name}`);
      return { object: undefined, changed: true, removed: true };
    }
    if (existing.metadata.deletionTimestamp !== undefined) return { object: structuredClone(existing), changed: false, removed: false };
    const next = structuredClone(existing);
    // The registry bumps generation when deletion starts, so controllers see a new generation to observe.
    Object.assign(next.metadata, {
      deletionTimestamp: rfc3339(),
      deletionGracePeriodSeconds: 0,
      generation: (next.metadata.generation ?? 0) + 1,
    });
    return this.commit(existing, next);
  }

  updateStatus(namespace: string, name: string, status: Record<string, unknown>, options: { resourceVersion?: string } = {}): WriteResult {
    const existing = this.mustGet(namespace, name);
    if (options.resourceVersion !== undefined && options.resourceVersion !== existing.metadata.resourceVersion) {
      throw new ApiError(409, 'the object has been modified; please apply your changes to the latest version and try again');
    }
    return this.commit(existing, { ...structuredClone(existing), status: structuredClone(status) });
  }

  updateFinalizers(namespace: string, name: string, edit: (finalizers: string[]) => string[]): WriteResult {
    const existing = this.mustGet(namespace, name);
    const next = structuredClone(existing);
    setOrDrop(next.metadata, 'finalizers', edit([...(existing.metadata.finalizers ?? [])]));
    return this.commit(existing, next);
  }

  /** Stores `next` unless nothing changed; a deleting object whose last finalizer went is removed. */
  private commit(existing: K8sObject | undefined, next: K8sObject): WriteResult {
    if (existing && isDeepStrictEqual(existing, next)) return { object: structuredClone(existing), changed: false, removed: false };
    const key = `${next.metadata.namespace ?? ''}/${next.metadata.name}`;
    const added = (next.metadata.finalizers ?? []).filter((f) => !(existing?.metadata.finalizers ?? []).includes(f));
    if (existing?.metadata.deletionTimestamp !== undefined && added.length > 0) {
      throw new ApiError(
        422,
        `metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
      );
    }
    if (next.metadata.deletionTimestamp !== undefined && (next.metadata.finalizers ?? []).length === 0) {
      this.objects.delete(key);
      return { object: undefined, changed: true, removed: true };
    }
    next.metadata.resourceVersion = String(++this.revision);
    this.objects.set(key, next);
    return { object: structuredClone(next), changed: true, removed: false };
  }

  private mustGet(namespace: string, name: string): K8sObject {
    const obj = this.objects.get(`${namespace}/${name}`);
    if (!obj) throw new ApiError(404, `${this.resource.kind} "${name}" not found`);
    return obj;
  }
}

function body(obj: K8sObject): Record<string, unknown> {
  return Object.fromEntries(Object.entries(obj).filter(([key]) => !NOT_BODY.has(key)));
}

/** The API server omits empty maps and lists in metadata. */
function setOrDrop(target: Record<string, unknown>, key: string, value: unknown): void {
  const empty = value === undefined || value === null || (typeof value === 'object' && Object.keys(value).length === 0);
  if (empty) delete target[key];
  else target[key] = value;
}

function rfc3339(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}
