// An in-memory API server for one namespaced CRD with the status subresource, for the fast tiers. It keeps the
// server-side rules a hook can observe: uid, resourceVersion on every real write (no-op writes are skipped),
// generation bumped only by body changes and by the start of deletion, status ignored on main-resource writes,
// finalizer-gated deletion, resourceVersion preconditions. What only the real server can tell (managedFields, schema
// validation, CEL rules, list merging) is left to the real-API-server tier (test/kube-*.test.ts), which also runs the
// rules kept here against kube-apiserver.
import { randomUUID } from 'node:crypto';
import type { ApplyInput, K8sObject, ParentResource } from './types.js';
import { deepCopy, isPlainObject, jsonDeepEqual } from './json.js';
import { ApiError, type ParentStore, type StatusWriteOptions, type WriteResult } from './parent-store.js';

export { ApiError, type WriteResult };

const USER_METADATA = ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const;
const NOT_BODY = new Set(['apiVersion', 'kind', 'metadata', 'status']);

export function rfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export class FakeApiServer implements ParentStore {
  private readonly objects = new Map<string, K8sObject>();
  private revision = 1000;

  constructor(
    private readonly resource: Required<ParentResource>,
    private readonly now: () => Date,
  ) {}

  /** Create, or update like `kubectl apply` by one manager: given metadata fields replace, omitted ones are kept. */
  apply(input: ApplyInput): K8sObject {
    const { apiVersion, kind } = this.resource;
    if ((input.apiVersion ?? apiVersion) !== apiVersion || (input.kind ?? kind) !== kind) {
      throw new ApiError(422, 'Invalid', `this server stores ${kind} ${apiVersion} only`);
    }
    const namespace = input.metadata.namespace ?? 'default';
    const existing = this.objects.get(`${namespace}/${input.metadata.name}`);
    if (!existing) return this.create(input, namespace);

    const meta = input.metadata;
    if (meta.resourceVersion !== undefined && meta.resourceVersion !== existing.metadata.resourceVersion) {
      throw new ApiError(409, 'Conflict', `the object has been modified; please apply your changes to the latest version`);
    }
    if (meta.uid !== undefined && meta.uid !== existing.metadata.uid) {
      throw new ApiError(409, 'Conflict', `Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${existing.metadata.uid}`);
    }
    const next = deepCopy(existing);
    for (const key of Object.keys(next)) if (!NOT_BODY.has(key)) delete next[key];
    for (const [key, value] of Object.entries(input)) if (!NOT_BODY.has(key)) next[key] = deepCopy(value);
    for (const key of USER_METADATA) if (key in meta) setOrDrop(next.metadata, key, deepCopy(meta[key]));

    this.refuseNewFinalizers(existing, next.metadata.finalizers ?? []);
    const bodyChanged = !jsonDeepEqual(body(existing), body(next));
    const metaChanged = USER_METADATA.some((k) => !jsonDeepEqual(existing.metadata[k], next.metadata[k]));
    if (!bodyChanged && !metaChanged) return deepCopy(existing);
    if (bodyChanged) next.metadata.generation = (next.metadata.generation ?? 0) + 1;
    this.bump(next);
    return deepCopy(this.store(next).object ?? next);
  }

  get(namespace: string, name: string): K8sObject | undefined {
    const obj = this.objects.get(`${namespace}/${name}`);
    return obj && deepCopy(obj);
  }

  /** The store is its own cache: a live read is a cached one. */
  read(namespace: string, name: string): K8sObject | undefined {
    return this.get(namespace, name);
  }

  list(): K8sObject[] {
    return [...this.objects.values()].map((obj) => deepCopy(obj));
  }

  /** Without finalizers the object goes at once; with them it is marked (CRs have no graceful deletion). */
  delete(namespace: string, name: string): WriteResult {
    const existing = this.mustGet(namespace, name);
    if ((existing.metadata.finalizers ?? []).length === 0) {
      this.objects.delete(`${namespace}/${name}`);
      return { object: undefined, changed: true, removed: true };
    }
    if (existing.metadata.deletionTimestamp !== undefined) return { object: deepCopy(existing), changed: false, removed: false };
    const next = deepCopy(existing);
    next.metadata.deletionTimestamp = rfc3339(this.now());
    next.metadata.deletionGracePeriodSeconds = 0;
    // The registry bumps generation when deletion starts, so controllers see a new generation to observe.
    if ((next.metadata.generation ?? 0) > 0) next.metadata.generation = (next.metadata.generation ?? 0) + 1;
    this.bump(next);
    this.objects.set(`${namespace}/${name}`, next);
    return { object: deepCopy(next), changed: true, removed: false };
  }

  /** PUT /status: only `.status` changes; an identical status is a no-op without a new resourceVersion. */
  updateStatus(namespace: string, name: string, status: Record<string, unknown> | undefined, options: StatusWriteOptions = {}): WriteResult {
    const existing = this.mustGet(namespace, name);
    if (options.resourceVersion !== undefined && options.resourceVersion !== existing.metadata.resourceVersion) {
      throw new ApiError(409, 'Conflict', 'the object has been modified; please apply your changes to the latest version and try again');
    }
    if (jsonDeepEqual(existing.status, status)) return { object: deepCopy(existing), changed: false, removed: false };
    const next = deepCopy(existing);
    if (status === undefined) delete next.status;
    else next.status = deepCopy(status);
    this.bump(next);
    return { ...this.store(next), changed: true };
  }

  /** A metadata update of the finalizer list, the way Metacontroller's AtomicUpdate does it. */
  updateFinalizers(namespace: string, name: string, edit: (finalizers: string[]) => string[]): WriteResult {
    const existing = this.mustGet(namespace, name);
    const before = existing.metadata.finalizers ?? [];
    const after = edit([...before]);
    if (jsonDeepEqual(before, after)) return { object: deepCopy(existing), changed: false, removed: false };
    this.refuseNewFinalizers(existing, after);
    const next = deepCopy(existing);
    setOrDrop(next.metadata, 'finalizers', after);
    this.bump(next);
    return { ...this.store(next), changed: true };
  }

  private create(input: ApplyInput, namespace: string): K8sObject {
    const { apiVersion, kind } = this.resource;
    if (!input.metadata.name) throw new ApiError(422, 'Invalid', 'metadata.name: Required value');
    const obj: K8sObject = {
      apiVersion,
      kind,
      metadata: {
        name: input.metadata.name,
        namespace,
        uid: randomUUID(),
        generation: 1,
        creationTimestamp: rfc3339(this.now()),
      },
    };
    for (const key of USER_METADATA) setOrDrop(obj.metadata, key, deepCopy(input.metadata[key]));
    // The status subresource makes the main endpoint drop `.status` on create as on update.
    for (const [key, value] of Object.entries(input)) if (!NOT_BODY.has(key)) obj[key] = deepCopy(value);
    this.bump(obj);
    this.objects.set(`${namespace}/${obj.metadata.name}`, obj);
    return deepCopy(obj);
  }

  /** ValidateObjectMetaUpdate: a deleting object may lose finalizers but never gain one. */
  private refuseNewFinalizers(existing: K8sObject, finalizers: readonly string[]): void {
    if (existing.metadata.deletionTimestamp === undefined) return;
    const added = [...new Set(finalizers)].filter((f) => !(existing.metadata.finalizers ?? []).includes(f)).sort();
    if (added.length === 0) return;
    throw new ApiError(422, 'Invalid', `${this.resource.kind}.${group(this.resource.apiVersion)} "${existing.metadata.name}" is invalid: `
      + `metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, `
      + `found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`);
  }

  private store(next: K8sObject): WriteResult {
    const key = `${next.metadata.namespace}/${next.metadata.name}`;
    if (next.metadata.deletionTimestamp !== undefined && (next.metadata.finalizers ?? []).length === 0) {
      this.objects.delete(key);
      return { object: deepCopy(next), changed: true, removed: true };
    }
    this.objects.set(key, next);
    return { object: deepCopy(next), changed: true, removed: false };
  }

  private bump(obj: K8sObject): void {
    this.revision += 1;
    obj.metadata.resourceVersion = String(this.revision);
  }

  private mustGet(namespace: string, name: string): K8sObject {
    const obj = this.objects.get(`${namespace}/${name}`);
    if (!obj) throw new ApiError(404, 'NotFound', `${this.resource.plural}.${group(this.resource.apiVersion)} "${name}" not found`);
    return obj;
  }
}

function body(obj: K8sObject): Record<string, unknown> {
  return Object.fromEntries(Object.entries(obj).filter(([key]) => !NOT_BODY.has(key)));
}

/** The API server omits empty maps and lists in metadata. */
function setOrDrop(target: Record<string, unknown>, key: string, value: unknown): void {
  const empty = value === undefined || value === null
    || (Array.isArray(value) && value.length === 0) || (isPlainObject(value) && Object.keys(value).length === 0);
  if (empty) delete target[key];
  else target[key] = value;
}

function group(apiVersion: string): string {
  return apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
}
