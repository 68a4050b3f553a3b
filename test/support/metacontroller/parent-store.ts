// What the Metacontroller emulator needs of an API server for its parent resource: reads from a
// cache (Metacontroller reads parents from an informer) and writes that may be asynchronous. Two
// stores implement it: the in-memory FakeApiServer, and KubeParentStore over a real kube-apiserver.
import type { ApplyInput, K8sObject } from './types.js';

export class ApiError extends Error {
  constructor(
    readonly code: 404 | 409 | 422,
    readonly reason: 'NotFound' | 'Conflict' | 'Invalid',
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface WriteResult {
  object: K8sObject | undefined;
  changed: boolean;
  /** The write emptied the finalizers of a deleting object, so the object is gone. */
  removed: boolean;
}

export interface StatusWriteOptions {
  fieldManager?: string;
  /** Precondition: the write fails with 409 Conflict unless the stored object has this resourceVersion. */
  resourceVersion?: string;
}

type Sync<T> = T | Promise<T>;

export interface ParentStore {
  /** From the cache, as Metacontroller's informer has it. */
  get(namespace: string, name: string): K8sObject | undefined;
  /** A live GET from the API server. */
  read(namespace: string, name: string): Sync<K8sObject | undefined>;
  list(): K8sObject[];
  /** Create, or update the way `kubectl apply` does for one field manager. */
  apply(input: ApplyInput, fieldManager?: string): Sync<K8sObject>;
  /** Without finalizers the object goes at once; with them it is marked deleting. */
  delete(namespace: string, name: string): Sync<WriteResult>;
  /** PUT /status: only `.status` changes; an identical status is a no-op without a new resourceVersion. */
  updateStatus(namespace: string, name: string, status: Record<string, unknown> | undefined, options?: StatusWriteOptions): Sync<WriteResult>;
  /** A metadata update of the finalizer list, retried on conflict like Metacontroller's AtomicUpdate. */
  updateFinalizers(namespace: string, name: string, edit: (finalizers: string[]) => string[], fieldManager?: string): Sync<WriteResult>;
}
