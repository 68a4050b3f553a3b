// A faithful stand-in for Metacontroller v4.17 running one CompositeController (sync + optional finalize hook, no
// childResources), driving a real hook service over HTTP, against an in-memory API server (fast tiers) or a real
// kube-apiserver (KubeParentStore). Rules emulated are those of /work/shared/reference/metacontroller-hooks.md §0, §2,
// §3; the modules under ./metacontroller/ each hold one of them.
import { FakeApiServer, rfc3339 } from './metacontroller/api-server.js';
import { ApiError, type ParentStore } from './metacontroller/parent-store.js';
import { ItemExponentialBackoff } from './metacontroller/backoff.js';
import { buildCompositeController } from './metacontroller/controller-object.js';
import { deleteAndFinalize, reconcileUntilStable, waitFor } from './metacontroller/drivers.js';
import type { FinalizeResult, StableOptions, StableResult } from './metacontroller/drivers.js';
import { syncParent } from './metacontroller/sync-pass.js';
import type { Audit, PassContext } from './metacontroller/sync-pass.js';
import type {
  ApplyInput, CallRecord, Condition, EventRecord, FakeMetacontrollerOptions, HookVersion, K8sObject, PassResult,
} from './metacontroller/types.js';

export { ApiError };
export type * from './metacontroller/types.js';
export type { FinalizeResult, StableOptions, StableResult };

/** Options; `api` is the store of the parents, by default a fresh in-memory FakeApiServer. */
export type MetacontrollerOptions<Api extends ParentStore> = FakeMetacontrollerOptions & { api?: Api };

export class FakeMetacontroller<Api extends ParentStore = FakeApiServer> {
  readonly controllerName: string;
  readonly finalizerName: string;
  readonly hookVersion: HookVersion;
  readonly resyncPeriodSeconds: number;
  /** The CompositeController object sent as `controller`. */
  readonly controller: Record<string, unknown>;
  readonly api: Api;
  private readonly audit: Audit = { calls: [], events: [], statusWrites: 0, hookCalls: 0, finalizerWrites: 0 };
  private readonly backoff = new ItemExponentialBackoff();
  private readonly inFlight = new Map<string, Promise<PassResult>>();
  private readonly context: PassContext;

  constructor(options: MetacontrollerOptions<Api>) {
    const now = options.now ?? ((): Date => new Date());
    const resource = { ...options.resource, plural: options.resource.plural ?? `${options.resource.kind.toLowerCase()}s` };
    this.controllerName = options.controllerName ?? 'wasmcloudapplication-controller';
    this.finalizerName = `metacontroller.io/compositecontroller-${this.controllerName}`;
    this.hookVersion = options.hookVersion ?? 'v1';
    this.resyncPeriodSeconds = Math.max(1, options.resyncPeriodSeconds ?? 300);
    // Zero or negative timeouts fall back to 10 s, as webhookTimeout does.
    const timeoutMs = options.timeoutMs !== undefined && options.timeoutMs > 0 ? options.timeoutMs : 10_000;
    this.api = options.api ?? (new FakeApiServer(resource, now) as ParentStore as Api);
    this.controller = buildCompositeController({
      controllerName: this.controllerName,
      resource,
      syncUrl: options.syncUrl,
      finalizeUrl: options.finalizeUrl,
      hookVersion: this.hookVersion,
      timeoutMs,
      strict: options.strict,
      resyncPeriodSeconds: this.resyncPeriodSeconds,
      createdAt: rfc3339(now()),
    });
    this.context = {
      api: this.api,
      controller: this.controller,
      finalizerName: this.finalizerName,
      syncUrl: options.syncUrl,
      finalizeUrl: options.finalizeUrl,
      hookVersion: this.hookVersion,
      strict: options.strict ?? this.hookVersion === 'v2',
      timeoutMs,
      headers: options.headers ?? {},
      backoff: this.backoff,
      audit: this.audit,
      ...(options.etag ? { etagCache: new Map() } : {}),
      now,
    };
  }

  /** Creates or updates a parent; see ParentStore.apply. */
  apply(obj: ApplyInput): ReturnType<Api['apply']> {
    return this.api.apply(obj) as ReturnType<Api['apply']>;
  }

  get(namespace: string, name: string): K8sObject | undefined {
    return this.api.get(namespace, name);
  }

  list(): K8sObject[] {
    return this.api.list();
  }

  /** Marks the parent deleting when it has finalizers, else removes it; throws ApiError 404 when absent. */
  delete(namespace: string, name: string): ReturnType<Api['delete']> {
    return this.api.delete(namespace, name) as ReturnType<Api['delete']>;
  }

  /** Writes `.status` as another client would (e.g. to seed a stale status); not counted in statusWrites. */
  setStatus(namespace: string, name: string, status: Record<string, unknown> | undefined, fieldManager = 'someone-else'): ReturnType<Api['updateStatus']> {
    return this.api.updateStatus(namespace, name, status, { fieldManager }) as ReturnType<Api['updateStatus']>;
  }

  /** One sync of the parent key; passes for the same key never overlap, as in Metacontroller's workqueue. */
  reconcile(namespace: string, name: string): Promise<PassResult> {
    const key = `${namespace}/${name}`;
    const previous = this.inFlight.get(key) ?? Promise.resolve(undefined);
    const run = previous.catch(() => undefined).then(() => syncParent(this.context, namespace, name));
    this.inFlight.set(key, run);
    void run.finally(() => {
      if (this.inFlight.get(key) === run) this.inFlight.delete(key);
    }).catch(() => undefined);
    return run;
  }

  reconcileUntilStable(namespace: string, name: string, options?: StableOptions): Promise<StableResult> {
    return reconcileUntilStable(this, namespace, name, options);
  }

  waitFor(
    namespace: string, name: string, predicate: (obj: K8sObject | undefined) => boolean,
    options?: { timeoutMs?: number; intervalMs?: number },
  ): Promise<{ passes: number; object: K8sObject | undefined }> {
    return waitFor(this, namespace, name, predicate, options);
  }

  deleteAndFinalize(namespace: string, name: string, options?: StableOptions): Promise<FinalizeResult> {
    return deleteAndFinalize(this, namespace, name, options);
  }

  get calls(): readonly CallRecord[] {
    return this.audit.calls;
  }

  /** Calls answered 304 and applied from Metacontroller's ETag cache (with `etag: true`). */
  get etagHits(): number {
    return this.audit.etagHits ?? 0;
  }

  get events(): readonly EventRecord[] {
    return this.audit.events;
  }

  get statusWrites(): number {
    return this.audit.statusWrites;
  }

  get hookCalls(): number {
    return this.audit.hookCalls;
  }

  get finalizerWrites(): number {
    return this.audit.finalizerWrites;
  }

  /** Consecutive failures of a parent key so far (the n of 5 ms·2ⁿ). */
  retries(namespace: string, name: string): number {
    return this.backoff.retries(`${namespace}/${name}`);
  }
}

/** The condition of `type` in `obj.status.conditions`, if any. */
export function condition(obj: K8sObject | undefined, type: string): Condition | undefined {
  const conditions = obj?.status?.['conditions'];
  if (!Array.isArray(conditions)) return undefined;
  return conditions.find((c): c is Condition => typeof c === 'object' && c !== null && (c as Condition).type === type);
}
