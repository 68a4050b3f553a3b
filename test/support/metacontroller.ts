// A stand-in for Metacontroller v4.17 running our CompositeController (manifests/compositecontroller.yaml: sync and
// finalize hooks, no childResources, v1 hooks, loose decoding), driving a real hook service over HTTP, against an
// in-memory API server (fast tiers) or a real kube-apiserver (KubeParentStore). It keeps what our tests rely on, from
// /work/shared/reference/metacontroller-hooks.md §0 and §2: the finalizer, sync or finalize, status replaced with
// observedGeneration and written only on change, the ETag cache, 429 and error backoff, resyncAfterSeconds. When each
// pass comes, in time, is metacontroller/workqueue.ts's: the workqueue with its rate limiter, on a test clock.
// It throws where our hook breaks the contract in a way Metacontroller would not report (children, or finalized
// from sync), so every test that drives it also checks that.
import { readFileSync } from 'node:fs';
import { setImmediate as nextTick } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import yaml from 'js-yaml';
import {
  ApiError,
  FakeApiServer,
  type ApplyInput,
  type K8sObject,
  type ParentResource,
  type ParentStore,
} from './metacontroller/api-server.js';
import { until } from './wait.js';

export { ApiError, type K8sObject };

const MANIFEST = new URL('../../manifests/compositecontroller.yaml', import.meta.url);
const LATTICE_MANIFEST = new URL('../../manifests/lattice-controller.yaml', import.meta.url);

export interface MetacontrollerOptions<Api extends ParentStore> {
  syncUrl: string;
  /** Without it there is no finalize hook, so no finalizer. */
  finalizeUrl?: string;
  resource: ParentResource;
  /** webhook.etag.enabled: send If-None-Match with the cached ETag and apply the cached body on 304/412. */
  etag?: boolean;
  /** The store of the parents; a fresh in-memory FakeApiServer by default. */
  api?: Api;
  /** Clock of Retry-After dates. */
  now?: () => number;
  /** The CompositeController run: manifests/compositecontroller.yaml by default. */
  manifest?: URL;
}

/** The answer as Metacontroller decodes it into CompositeHookResponse. */
interface HookResponse {
  status: Record<string, unknown> | null;
  children: unknown[] | null;
  resyncAfterSeconds: number;
  finalized: boolean;
}

export interface PassResult {
  /** Undefined when the parent no longer exists (nothing is called). */
  hook: 'sync' | 'finalize' | undefined;
  /** Absent on transport errors and timeouts. */
  httpStatus?: number;
  /** Why the call failed: a SyncError event on the parent, status untouched. */
  error?: string;
  /** Delay of the rate-limited retry after an error: 5 ms·2ⁿ, capped at 1000 s. */
  backoffMs?: number;
  retryAfterSeconds?: number;
  resyncAfterSeconds?: number;
  finalized?: boolean;
  /** Metacontroller wrote `.status` in this pass. */
  statusChanged: boolean;
  /** The finalizer was added or removed (a parent write, so a watch event). */
  finalizerChanged: boolean;
  /** The parent is gone after this pass. */
  removed: boolean;
}

export interface DelayOptions {
  /** 'immediate' (default) yields a tick instead of every delay; 'real' sleeps it, up to `realResyncCapMs`. */
  honourResync?: 'immediate' | 'real';
  realResyncCapMs?: number;
  maxPasses?: number;
}

/** The parents of our CompositeController. */
export const WASMCLOUD_APPLICATIONS: ParentResource = { apiVersion: 'core.wasmcloud.com/v1beta1', kind: 'WasmCloudApplication' };

/** The parents of the second CompositeController (manifests/lattice-controller.yaml): cluster-scoped. */
export const WASMCLOUD_LATTICES: ParentResource = {
  apiVersion: 'core.wasmcloud.com/v1beta1',
  kind: 'WasmCloudLattice',
  plural: 'wasmcloudlattices',
  namespaced: false,
};

/**
 * The emulator running manifests/lattice-controller.yaml against the hook service at `url` (its
 * /lattice/sync), for WasmCloudLattice parents: their namespace is `''` in every call.
 */
export function latticeMetacontrollerFor<Api extends ParentStore = FakeApiServer>(
  url: string,
  options: Omit<MetacontrollerOptions<Api>, 'syncUrl' | 'finalizeUrl' | 'resource' | 'manifest'> = {},
): FakeMetacontroller<Api> {
  return new FakeMetacontroller<Api>({
    syncUrl: `${url}/lattice/sync`,
    resource: WASMCLOUD_LATTICES,
    manifest: LATTICE_MANIFEST,
    ...options,
  });
}

/** The emulator driving the hook service at `url` (its /sync and /finalize), for WasmCloudApplication parents. */
export function metacontrollerFor<Api extends ParentStore = FakeApiServer>(
  url: string,
  options: Omit<MetacontrollerOptions<Api>, 'syncUrl' | 'finalizeUrl' | 'resource'> & { resource?: ParentResource } = {},
): FakeMetacontroller<Api> {
  return new FakeMetacontroller<Api>({
    syncUrl: `${url}/sync`,
    finalizeUrl: `${url}/finalize`,
    resource: WASMCLOUD_APPLICATIONS,
    ...options,
  });
}

export class FakeMetacontroller<Api extends ParentStore = FakeApiServer> {
  readonly api: Api;
  readonly finalizerName: string;
  /** The CompositeController object sent as `controller`: the shipped one, pointed at the test's URLs. */
  readonly controller: Record<string, any>;
  /** Status writes so far. */
  statusWrites = 0;
  /** Calls answered 304/412 and applied from the ETag cache. */
  etagHits = 0;
  /** The CompositeController's resyncPeriodSeconds, in ms: the informer re-queues every parent this often. */
  readonly resyncPeriodMs: number;
  private readonly timeoutMs: number;
  private readonly failures = new Map<string, number>();
  private readonly etags: Map<string, { etag: string; body: string }> | undefined;
  private readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(private readonly options: MetacontrollerOptions<Api>) {
    this.api = options.api ?? (new FakeApiServer(options.resource) as ParentStore as Api);
    this.controller = yaml.load(readFileSync(options.manifest ?? MANIFEST, 'utf8')) as Record<string, any>;
    const { sync, finalize } = this.controller['spec'].hooks;
    const webhook = (url: string, hook: { webhook: Record<string, unknown> }, etag = {}) => ({
      webhook: { url, timeout: hook.webhook['timeout'], ...etag },
    });
    this.controller['spec'].hooks = {
      sync: webhook(options.syncUrl, sync, options.etag ? { etag: sync.webhook.etag } : {}),
      ...(options.finalizeUrl === undefined || finalize === undefined ? {} : { finalize: webhook(options.finalizeUrl, finalize) }),
    };
    this.finalizerName = `metacontroller.io/compositecontroller-${this.controller['metadata'].name}`;
    this.timeoutMs = seconds(sync.webhook.timeout) * 1000;
    this.resyncPeriodMs = Number(this.controller['spec'].resyncPeriodSeconds) * 1000;
    this.etags = options.etag ? new Map() : undefined;
  }

  apply(obj: ApplyInput): ReturnType<Api['apply']> {
    return this.api.apply(obj) as ReturnType<Api['apply']>;
  }

  get(namespace: string, name: string): K8sObject | undefined {
    return this.api.get(namespace, name);
  }

  delete(namespace: string, name: string): ReturnType<Api['delete']> {
    return this.api.delete(namespace, name) as ReturnType<Api['delete']>;
  }

  /** One sync of the parent key; passes for the same key never overlap, as in Metacontroller's workqueue. */
  reconcile(namespace: string, name: string): Promise<PassResult> {
    const key = `${namespace}/${name}`;
    const run = (this.inFlight.get(key) ?? Promise.resolve()).catch(() => undefined).then(() => this.pass(namespace, name));
    this.inFlight.set(key, run);
    return run;
  }

  /** Reconciles as the workqueue would until a pass writes and schedules nothing; throws on a hot loop. */
  async reconcileUntilStable(namespace: string, name: string, options: DelayOptions = {}) {
    const maxPasses = options.maxPasses ?? 20;
    const writesBefore = this.statusWrites;
    const results: PassResult[] = [];
    const statuses: string[] = [];
    while (results.length < maxPasses) {
      const result = await this.reconcile(namespace, name);
      results.push(result);
      statuses.push(JSON.stringify(this.get(namespace, name)?.status));
      if (result.removed || isQuiet(result)) {
        return {
          passes: results.length,
          statusWrites: this.statusWrites - writesBefore,
          object: this.get(namespace, name),
          stable: true,
          results,
        };
      }
      await pause(nextDelayMs(result) ?? 0, options);
    }
    throw new Error(
      `${namespace}/${name} did not settle within ${maxPasses} passes (a hot loop: every pass wrote status, ` +
        `scheduled a resync or failed).\nlast passes: ${results.slice(-3).map(summarize).join('\n             ')}` +
        `\nlast statuses:\n  ${statuses.slice(-3).join('\n  ')}`,
    );
  }

  /** Reconciles every `intervalMs` (as resyncs would) until the parent satisfies `predicate`. */
  async waitFor(
    namespace: string,
    name: string,
    predicate: (obj: K8sObject | undefined) => boolean,
    options: { timeoutMs?: number; intervalMs?: number } = {},
  ) {
    let passes = 0;
    let last: PassResult | undefined;
    const pass = async () => {
      last = await this.reconcile(namespace, name);
      passes += 1;
      return predicate(this.get(namespace, name));
    };
    const what = () =>
      `${namespace}/${name} after ${passes} passes\nlast pass: ${last ? summarize(last) : 'none'}\nstatus: ${JSON.stringify(this.get(namespace, name)?.status)}`;
    await until(pass, { what, timeoutMs: options.timeoutMs ?? 5000, intervalMs: options.intervalMs ?? 50 });
    return { passes, object: this.get(namespace, name) };
  }

  /** Deletes the parent and reconciles until it is gone; a quiet pass waits for resyncPeriodSeconds (capped). */
  async deleteAndFinalize(namespace: string, name: string, options: DelayOptions = {}) {
    const results: PassResult[] = [];
    let removed = (await this.delete(namespace, name)).removed;
    while (!removed && results.length < (options.maxPasses ?? 20)) {
      const result = await this.reconcile(namespace, name);
      results.push(result);
      removed = result.removed;
      if (!removed) await pause(nextDelayMs(result) ?? this.resyncPeriodMs, options);
    }
    return { passes: results.length, removed, object: this.get(namespace, name), results };
  }

  /** syncParentObject (pkg/controller/composite/controller.go) for a controller without child resources. */
  private async pass(namespace: string, name: string): Promise<PassResult> {
    const key = `${namespace}/${name}`;
    let parent = await this.api.read(namespace, name);
    if (!parent) return { hook: undefined, statusChanged: false, finalizerChanged: false, removed: true };
    const uid = parent.metadata.uid;
    const deleting = parent.metadata.deletionTimestamp !== undefined;
    const wantFinalizer = this.options.finalizeUrl !== undefined;
    // The finalizer first, so that a later deletion always reaches the finalize hook.
    let finalizerChanged = false;
    if ((parent.metadata.finalizers ?? []).includes(this.finalizerName) !== wantFinalizer && !(wantFinalizer && deleting)) {
      const write = await this.api.updateFinalizers(namespace, name, (list) =>
        wantFinalizer ? [...list, this.finalizerName] : this.without(list),
      );
      finalizerChanged = write.changed;
      parent = write.object ?? parent;
    }
    const hook = wantFinalizer && deleting ? 'finalize' : 'sync';
    const base = { hook, finalizerChanged, statusChanged: false, removed: false } as const;
    const answer = await this.call(hook, key, parent);
    if ('retryAfterSeconds' in answer) {
      // sync() returns nil after AddAfter: processNextWorkItem then Forgets the key's failures.
      this.failures.delete(key);
      return { ...base, httpStatus: 429, retryAfterSeconds: answer.retryAfterSeconds };
    }
    if ('error' in answer) {
      // AddRateLimited: per-key exponential backoff, forgotten after a success.
      const failures = this.failures.get(key) ?? 0;
      this.failures.set(key, failures + 1);
      return {
        ...base,
        httpStatus: answer.httpStatus,
        error: `${hook} hook failed: ${answer.error}`,
        backoffMs: Math.min(5 * 2 ** failures, 1_000_000),
      };
    }
    const { response } = answer;
    if ((response.children ?? []).length > 0)
      throw new Error(`the ${hook} hook returned children, but the controller declares no childResources`);
    if (response.finalized && hook === 'sync')
      throw new Error('the sync hook returned finalized: true: Metacontroller strips the finalizer and the next sync adds it back');
    const result: PassResult = { ...base, httpStatus: answer.httpStatus };
    if (response.resyncAfterSeconds > 0) result.resyncAfterSeconds = response.resyncAfterSeconds;
    if (response.finalized) {
      result.finalized = true;
      const write = await this.api.updateFinalizers(namespace, name, (list) => this.without(list));
      result.finalizerChanged ||= write.changed;
      parent = write.object ?? parent;
    }
    result.statusChanged = await this.writeStatus(namespace, name, uid, {
      ...response.status,
      observedGeneration: parent.metadata.generation,
    });
    this.statusWrites += result.statusChanged ? 1 : 0;
    this.failures.delete(key);
    result.removed = this.get(namespace, name)?.metadata.uid !== uid;
    return result;
  }

  private without(finalizers: string[]): string[] {
    return finalizers.filter((f) => f !== this.finalizerName);
  }

  /** One POST (pkg/hooks/webhook.go): the answer, Retry-After of a 429, or why the call failed. */
  private async call(hook: 'sync' | 'finalize', key: string, parent: K8sObject) {
    const url = hook === 'sync' ? this.options.syncUrl : this.options.finalizeUrl!;
    const body = JSON.stringify({ controller: this.controller, parent, children: {}, related: {}, finalizing: hook === 'finalize' });
    const cached = this.etags?.get(key);
    let response: Response;
    let text: string;
    try {
      const headers = { 'Content-Type': 'application/json', ...(cached ? { 'If-None-Match': cached.etag } : {}) };
      response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(this.timeoutMs) });
      text = await response.text();
    } catch (error) {
      return { error: `Post "${url}": ${explain(error)}` };
    }
    const httpStatus = response.status;
    if (httpStatus === 429) return { retryAfterSeconds: retryAfter(response.headers.get('retry-after'), (this.options.now ?? Date.now)()) };
    if (cached && (httpStatus === 304 || httpStatus === 412)) {
      this.etagHits += 1;
      text = cached.body;
    } else if (httpStatus !== 200) {
      return { httpStatus, error: `unsupported status code: ${httpStatus} body: ${text}` };
    } else if (this.etags && response.headers.get('etag')) {
      this.etags.set(key, { etag: response.headers.get('etag')!, body: text });
    }
    const decoded = decode(text);
    return typeof decoded === 'string'
      ? { httpStatus, error: `can't unmarshal webhookResponse: ${decoded}` }
      : { httpStatus, response: decoded };
  }

  /**
   * AtomicStatusUpdate: a live GET, nothing when the status is already equal (reflect.DeepEqual: key order does not
   * count, array order does), else a PUT to /status on the resourceVersion just read; a Conflict reads again.
   * NotFound, and a Conflict after retry.DefaultBackoff's 5 tries, are swallowed.
   */
  private async writeStatus(namespace: string, name: string, uid: string | undefined, status: Record<string, unknown>): Promise<boolean> {
    for (let attempt = 1; attempt <= 5; attempt++) {
      const live = await this.api.read(namespace, name);
      if (!live || live.metadata.uid !== uid || isDeepStrictEqual(live.status, status)) return false;
      try {
        return (
          await this.api.updateStatus(namespace, name, status, {
            fieldManager: 'metacontroller',
            resourceVersion: live.metadata.resourceVersion,
          })
        ).changed;
      } catch (error) {
        if (!(error instanceof ApiError) || (error.code !== 404 && error.code !== 409)) throw error;
        if (error.code === 404) return false;
      }
    }
    return false;
  }
}

/** v1 loose decoding: keys are case-sensitive, unknown ones ignored, a wrong type fails; `null` is like `{}`. */
function decode(text: string): HookResponse | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  if (value === null) value = {};
  if (typeof value !== 'object' || Array.isArray(value)) return `cannot unmarshal ${JSON.stringify(value)} into CompositeHookResponse`;
  const { status = null, children = [], resyncAfterSeconds = 0, finalized = false } = value as Record<string, unknown>;
  const response = { status, children, resyncAfterSeconds: resyncAfterSeconds ?? 0, finalized: finalized ?? false };
  const typed =
    (status === null || (typeof status === 'object' && !Array.isArray(status))) &&
    (children === null || Array.isArray(children)) &&
    typeof response.resyncAfterSeconds === 'number' &&
    typeof response.finalized === 'boolean';
  return typed ? (response as HookResponse) : `a field of the wrong type in ${text}`;
}

/** Metacontroller's reading of Retry-After: whole seconds or an HTTP date; anything else (or none) is 0 s, a hot loop. */
function retryAfter(header: string | null, nowMs: number): number {
  if (header !== null && /^\d+$/.test(header)) return Number(header);
  // An RFC 1123 date; Date.parse alone would take "1.5" for a date too.
  const date = /^\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT$/.test(header ?? '') ? Date.parse(header!) : Number.NaN;
  return Number.isNaN(date) ? 0 : Math.ceil((date - nowMs) / 1000);
}

/** Go duration strings as the manifest writes them ("10s"). */
function seconds(duration: string): number {
  if (!/^\d+s$/.test(duration)) throw new Error(`unsupported webhook timeout ${duration} in ${MANIFEST.pathname}`);
  return Number.parseInt(duration, 10);
}

function explain(error: unknown): string {
  if ((error as Error).name === 'TimeoutError') return 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)';
  const cause = (error as Error).cause as Error | undefined;
  return cause?.message ?? String(error);
}

/** A pass after which Metacontroller would not sync this parent again until something else changes. */
function isQuiet(r: PassResult): boolean {
  return (
    !r.statusChanged &&
    !r.finalizerChanged &&
    r.error === undefined &&
    r.retryAfterSeconds === undefined &&
    r.resyncAfterSeconds === undefined
  );
}

/** Milliseconds until the workqueue would hand the key out again; undefined when nothing is scheduled. */
export function nextDelayMs(r: PassResult): number | undefined {
  if (r.statusChanged || r.finalizerChanged) return 0;
  if (r.backoffMs !== undefined) return r.backoffMs;
  if (r.retryAfterSeconds !== undefined) return Math.max(0, r.retryAfterSeconds * 1000);
  return r.resyncAfterSeconds === undefined ? undefined : r.resyncAfterSeconds * 1000;
}

async function pause(ms: number, options: DelayOptions): Promise<void> {
  if (options.honourResync !== 'real' || ms <= 0) return void (await nextTick());
  await new Promise((resolve) => setTimeout(resolve, Math.min(ms, options.realResyncCapMs ?? 2000)));
}

function summarize(r: PassResult): string {
  const parts = [`${r.hook ?? 'none'} → ${r.httpStatus ?? 'no response'}`];
  if (r.error !== undefined) parts.push(`error: ${r.error}`);
  if (r.statusChanged) parts.push('status written');
  if (r.finalizerChanged) parts.push('finalizer written');
  if (r.resyncAfterSeconds !== undefined) parts.push(`resyncAfterSeconds ${r.resyncAfterSeconds}`);
  if (r.retryAfterSeconds !== undefined) parts.push(`Retry-After ${r.retryAfterSeconds}s`);
  return parts.join(', ');
}

/** The condition of `type` in `obj.status.conditions`, if any. */
export function condition(
  obj: K8sObject | undefined,
  type: string,
): { type: string; status: string; reason?: string; message?: string; observedGeneration?: number } | undefined {
  const conditions = obj?.status?.['conditions'];
  return Array.isArray(conditions) ? conditions.find((c) => c?.type === type) : undefined;
}
