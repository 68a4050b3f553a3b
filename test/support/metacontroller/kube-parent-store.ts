// The emulator's parents on a real kube-apiserver, written as Metacontroller writes them (PUT /status and PUT of
// the finalizers, both on a resourceVersion precondition). Its cache holds what the last read or write returned;
// every pass starts with a live read, so a test never depends on how fast a watch would deliver.
import type { KubeClient, KubeResponse } from '../kube/client.js';
import { ApiError, type ApplyInput, type K8sObject, type ParentResource, type ParentStore, type WriteResult } from './api-server.js';

const FINALIZER_WRITE_TRIES = 5;

export class KubeParentStore implements ParentStore {
  private readonly cache = new Map<string, K8sObject>();

  constructor(
    private readonly client: KubeClient,
    private readonly resource: ParentResource & { plural: string },
  ) {}

  get(namespace: string, name: string): K8sObject | undefined {
    const obj = this.cache.get(`${namespace}/${name}`);
    return obj && structuredClone(obj);
  }

  async read(namespace: string, name: string): Promise<K8sObject | undefined> {
    const res = await this.client.request<K8sObject>('GET', this.path(namespace, name));
    if (res.status !== 404) return this.remember(this.check(res));
    this.cache.delete(`${namespace}/${name}`);
    return undefined;
  }

  /** Server-side apply of the body and user metadata by `fieldManager`, as `kubectl apply --server-side --force-conflicts`. */
  async apply(input: ApplyInput, fieldManager = 'kubectl'): Promise<K8sObject> {
    const { name, labels, annotations, finalizers } = input.metadata;
    const namespace = this.resource.namespaced === false ? '' : (input.metadata.namespace ?? 'default');
    const { apiVersion, kind } = this.resource;
    const { status: _ignored, ...rest } = input;
    const scoped = namespace === '' ? {} : { namespace };
    const body = { ...rest, apiVersion, kind, metadata: { name, ...scoped, labels, annotations, finalizers } };
    const query = `?fieldManager=${encodeURIComponent(fieldManager)}&force=true`;
    return this.remember(
      this.check(await this.client.request('PATCH', this.path(namespace, name) + query, body, 'application/apply-patch+yaml')),
    );
  }

  async delete(namespace: string, name: string): Promise<WriteResult> {
    const obj = this.check(await this.client.request<K8sObject>('DELETE', this.path(namespace, name)));
    const removed = obj.metadata.deletionTimestamp === undefined || (obj.metadata.finalizers ?? []).length === 0;
    if (removed) this.cache.delete(`${namespace}/${name}`);
    return { object: removed ? undefined : this.remember(obj), changed: true, removed };
  }

  async updateStatus(
    namespace: string,
    name: string,
    status: Record<string, unknown>,
    options: { fieldManager?: string; resourceVersion?: string } = {},
  ): Promise<WriteResult> {
    const live = await this.mustRead(namespace, name);
    const resourceVersion = options.resourceVersion ?? live.metadata.resourceVersion;
    const query = options.fieldManager ? `?fieldManager=${encodeURIComponent(options.fieldManager)}` : '';
    const body = { ...live, metadata: { ...live.metadata, resourceVersion }, status };
    const obj = this.remember(this.check(await this.client.request('PUT', `${this.path(namespace, name)}/status${query}`, body)));
    return { object: obj, changed: obj.metadata.resourceVersion !== resourceVersion, removed: false };
  }

  /** AtomicUpdate: GET, edit, PUT on that resourceVersion; a Conflict starts over. */
  async updateFinalizers(namespace: string, name: string, edit: (finalizers: string[]) => string[]): Promise<WriteResult> {
    for (let attempt = 1; ; attempt++) {
      const live = await this.mustRead(namespace, name);
      const finalizers = edit([...(live.metadata.finalizers ?? [])]);
      if (JSON.stringify(finalizers) === JSON.stringify(live.metadata.finalizers ?? []))
        return { object: live, changed: false, removed: false };
      const res = await this.client.request<K8sObject>('PUT', `${this.path(namespace, name)}?fieldManager=metacontroller`, {
        ...live,
        metadata: { ...live.metadata, finalizers },
      });
      if (res.status === 409 && attempt < FINALIZER_WRITE_TRIES) continue;
      const obj = this.check(res);
      const removed = obj.metadata.deletionTimestamp !== undefined && (obj.metadata.finalizers ?? []).length === 0;
      if (removed) this.cache.delete(`${namespace}/${name}`);
      return { object: removed ? undefined : this.remember(obj), changed: true, removed };
    }
  }

  private async mustRead(namespace: string, name: string): Promise<K8sObject> {
    const live = await this.read(namespace, name);
    if (!live) throw new ApiError(404, `${this.resource.plural} "${name}" not found`);
    return live;
  }

  private remember(obj: K8sObject): K8sObject {
    this.cache.set(`${obj.metadata.namespace ?? ''}/${obj.metadata.name}`, obj);
    return structuredClone(obj);
  }

  /** `''` is the namespace of a cluster-scoped resource's objects. */
  private path(namespace: string, name: string): string {
    const scope = namespace === '' ? '' : `/namespaces/${encodeURIComponent(namespace)}`;
    return `/apis/${this.resource.apiVersion}${scope}/${this.resource.plural}/${encodeURIComponent(name)}`;
  }

  private check<T extends K8sObject>(res: KubeResponse<T>): T {
    if (res.status >= 200 && res.status < 300) return res.body;
    const message = (res.body as { message?: string } | undefined)?.message ?? `HTTP ${res.status}`;
    if (res.status === 404 || res.status === 409 || res.status === 422) throw new ApiError(res.status, message);
    throw new Error(`kube-apiserver answered ${res.status}: ${message}`);
  }
}
