// The emulator's parents on a real kube-apiserver: an informer-like cache fed by list + watch, and writes as
// Metacontroller makes them (PUT /status and PUT of the finalizers, both on a resourceVersion precondition). After
// each write of its own the store waits until the watch has delivered it, so that the next pass reads what was
// written: a test then depends on the order of its own actions, never on how fast the watch is.
import type { KubeClient, KubeResponse, Watch, WatchEvent } from '../kube/client.js';
import { ApiError, type ParentStore, type StatusWriteOptions, type WriteResult } from './parent-store.js';
import type { ApplyInput, K8sObject, ParentResource } from './types.js';
import { deepCopy, jsonDeepEqual } from './json.js';

// Only bounds a watch that has died; every wait ends as soon as the event arrives.
const CATCH_UP_TIMEOUT_MS = 60_000;
const FINALIZER_WRITE_TRIES = 5;

export class KubeParentStore implements ParentStore {
  private readonly cache = new Map<string, K8sObject>();
  /** resourceVersion of the newest event delivered; etcd revisions, so they compare as integers. */
  private seenRevision = 0n;
  private readonly waiters = new Set<() => void>();
  private watch: Watch | undefined;
  /** Why the last list + watch failed; reported by a write that then waits in vain. */
  private watchError: unknown;
  private stopped = false;

  private constructor(
    private readonly client: KubeClient,
    private readonly collection: string,
    private readonly resource: Required<ParentResource>,
  ) {}

  static async start(client: KubeClient, resource: Required<ParentResource>): Promise<KubeParentStore> {
    const store = new KubeParentStore(client, `/apis/${resource.apiVersion}/${resource.plural}`, resource);
    await store.listAndWatch();
    return store;
  }

  stop(): void {
    this.stopped = true;
    this.watch?.stop();
  }

  get(namespace: string, name: string): K8sObject | undefined {
    const obj = this.cache.get(`${namespace}/${name}`);
    return obj && deepCopy(obj);
  }

  list(): K8sObject[] {
    return [...this.cache.values()].map((obj) => deepCopy(obj));
  }

  async read(namespace: string, name: string): Promise<K8sObject | undefined> {
    const res = await this.client.request<K8sObject>('GET', this.path(namespace, name));
    return res.status === 404 ? undefined : this.check(res);
  }

  /** Server-side apply of the body and user metadata by `fieldManager`, forcing conflicts as `kubectl apply --server-side --force-conflicts`. */
  async apply(input: ApplyInput, fieldManager = 'kubectl'): Promise<K8sObject> {
    const { name, namespace = 'default', labels, annotations, finalizers } = input.metadata;
    const { apiVersion, kind } = this.resource;
    const userMetadata = { ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}), ...(finalizers ? { finalizers } : {}) };
    const body = { ...input, apiVersion, kind, metadata: { name, namespace, ...userMetadata } };
    delete (body as { status?: unknown }).status;
    const query = `?fieldManager=${encodeURIComponent(fieldManager)}&force=true`;
    const obj = this.check(await this.client.request('PATCH', this.path(namespace, name) + query, body, 'application/apply-patch+yaml'));
    await this.caughtUp(obj, false);
    return obj;
  }

  async delete(namespace: string, name: string): Promise<WriteResult> {
    const obj = this.check(await this.client.request('DELETE', this.path(namespace, name)));
    const removed = obj.metadata.deletionTimestamp === undefined || (obj.metadata.finalizers ?? []).length === 0;
    await this.caughtUp(obj, removed);
    return { object: removed ? undefined : obj, changed: true, removed };
  }

  async updateStatus(namespace: string, name: string, status: Record<string, unknown> | undefined, options: StatusWriteOptions = {}): Promise<WriteResult> {
    const live = await this.read(namespace, name);
    if (!live) throw new ApiError(404, 'NotFound', `${this.resource.plural} "${name}" not found`);
    const body: K8sObject = { ...live, metadata: { ...live.metadata, resourceVersion: options.resourceVersion ?? live.metadata.resourceVersion } };
    if (status === undefined) delete body.status;
    else body.status = status;
    const query = options.fieldManager ? `?fieldManager=${encodeURIComponent(options.fieldManager)}` : '';
    const obj = this.check(await this.client.request('PUT', `${this.path(namespace, name)}/status${query}`, body));
    await this.caughtUp(obj, false);
    return { object: obj, changed: obj.metadata.resourceVersion !== body.metadata.resourceVersion, removed: false };
  }

  /** AtomicUpdate: GET, edit, PUT on that resourceVersion; a Conflict starts over. */
  async updateFinalizers(namespace: string, name: string, edit: (finalizers: string[]) => string[], fieldManager = 'metacontroller'): Promise<WriteResult> {
    for (let attempt = 1; ; attempt++) {
      const live = await this.read(namespace, name);
      if (!live) throw new ApiError(404, 'NotFound', `${this.resource.plural} "${name}" not found`);
      const before = live.metadata.finalizers ?? [];
      const after = edit([...before]);
      if (jsonDeepEqual(before, after)) return { object: live, changed: false, removed: false };
      const body = { ...live, metadata: { ...live.metadata, finalizers: after } };
      const res = await this.client.request<K8sObject>('PUT', `${this.path(namespace, name)}?fieldManager=${fieldManager}`, body);
      if (res.status === 409 && attempt < FINALIZER_WRITE_TRIES) continue;
      const obj = this.check(res);
      const removed = obj.metadata.deletionTimestamp !== undefined && (obj.metadata.finalizers ?? []).length === 0;
      await this.caughtUp(obj, removed);
      return { object: removed ? undefined : obj, changed: true, removed };
    }
  }

  private path(namespace: string, name: string): string {
    const [group, version] = this.resource.apiVersion.split('/');
    return `/apis/${group}/${version}/namespaces/${encodeURIComponent(namespace)}/${this.resource.plural}/${encodeURIComponent(name)}`;
  }

  private check<T extends K8sObject>(res: KubeResponse<T>): T {
    if (res.status >= 200 && res.status < 300) return res.body;
    const message = (res.body as { message?: string } | undefined)?.message ?? `HTTP ${res.status}`;
    if (res.status === 404) throw new ApiError(404, 'NotFound', message);
    if (res.status === 409) throw new ApiError(409, 'Conflict', message);
    if (res.status === 422) throw new ApiError(422, 'Invalid', message);
    throw new Error(`kube-apiserver answered ${res.status}: ${message}`);
  }

  /**
   * Like an informer, lists and watches again when the server asks to wait: a kube-apiserver that
   * has just started answers 429 "storage is (re)initializing" for a moment.
   */
  private async listAndWatch(attempt = 0): Promise<void> {
    try {
      await this.listAndWatchOnce();
    } catch (error) {
      if (!/HTTP 429/.test(String(error)) || attempt >= 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
      await this.listAndWatch(attempt + 1);
    }
  }

  private async listAndWatchOnce(): Promise<void> {
    const list = await this.client.request<{ items: K8sObject[]; metadata: { resourceVersion: string } }>('GET', this.collection);
    if (list.status !== 200) throw new Error(`list ${this.collection}: HTTP ${list.status}`);
    this.cache.clear();
    for (const item of list.body.items) this.cache.set(key(item), { ...item, apiVersion: this.resource.apiVersion, kind: this.resource.kind });
    this.advance(list.body.metadata.resourceVersion);
    const query = `?watch=1&allowWatchBookmarks=true&resourceVersion=${list.body.metadata.resourceVersion}`;
    this.watch = await this.client.watch(this.collection + query, (event) => this.onEvent(event));
    // The server ends watches after a while; an informer lists and watches again.
    void this.watch.ended
      .then(() => (this.stopped ? undefined : this.listAndWatch()))
      .catch((error: unknown) => {
        this.watchError = error;
      });
  }

  private onEvent(event: WatchEvent): void {
    const obj = event.object as K8sObject;
    if (event.type === 'ADDED' || event.type === 'MODIFIED') this.cache.set(key(obj), obj);
    if (event.type === 'DELETED' && this.cache.get(key(obj))?.metadata.uid === obj.metadata.uid) this.cache.delete(key(obj));
    if (obj.metadata?.resourceVersion) this.advance(obj.metadata.resourceVersion);
    for (const wake of [...this.waiters]) wake();
  }

  private advance(resourceVersion: string): void {
    const revision = BigInt(resourceVersion);
    if (revision > this.seenRevision) this.seenRevision = revision;
  }

  /** Waits until the cache holds this write: the object gone, or an event at least as new as it. */
  private caughtUp(obj: K8sObject, removed: boolean): Promise<void> {
    const done = removed
      ? () => this.cache.get(key(obj))?.metadata.uid !== obj.metadata.uid
      : () => this.seenRevision >= BigInt(obj.metadata.resourceVersion ?? '0');
    if (done()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(wake);
        const cause = this.watchError === undefined ? '' : ` (the watch failed: ${String(this.watchError)})`;
        reject(new Error(`the watch of ${this.collection} did not deliver ${key(obj)}@${obj.metadata.resourceVersion} within ${CATCH_UP_TIMEOUT_MS} ms${cause}`));
      }, CATCH_UP_TIMEOUT_MS);
      const wake = (): void => {
        if (!done()) return;
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve();
      };
      this.waiters.add(wake);
    });
  }
}

function key(obj: K8sObject): string {
  return `${obj.metadata.namespace}/${obj.metadata.name}`;
}
