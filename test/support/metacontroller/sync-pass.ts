// One pass of Metacontroller's sync(key) → syncParentObject for a CompositeController without child resources
// (pkg/controller/composite/controller.go), followed by the queue bookkeeping of processNextWorkItem.
import type { ApiError, ParentStore } from './parent-store.js';
import type { ItemExponentialBackoff } from './backoff.js';
import type { CallRecord, EventRecord, HookName, HookVersion, K8sObject, PassResult } from './types.js';
import { canonicalize, goEscape, jsonDeepEqual } from './json.js';
import { parseRetryAfter, postHook } from './hook-client.js';
import { decodeHookResponse } from './decode.js';

export interface Audit {
  calls: CallRecord[];
  events: EventRecord[];
  statusWrites: number;
  hookCalls: number;
  finalizerWrites: number;
  /** Calls answered 304 and served from the ETag cache. */
  etagHits?: number;
}

export interface PassContext {
  api: ParentStore;
  controller: Record<string, unknown>;
  finalizerName: string;
  syncUrl: string;
  finalizeUrl: string | undefined;
  hookVersion: HookVersion;
  strict: boolean;
  timeoutMs: number;
  headers: Record<string, string>;
  backoff: ItemExponentialBackoff;
  audit: Audit;
  /** With webhook.etag enabled: the last 200 answer with an ETag, per parent (pkg/hooks/webhook_etag.go). */
  etagCache?: Map<string, { etag: string; body: string }>;
  now: () => Date;
}

/** The request body as Go marshals CompositeHookRequest: struct order outside, sorted map keys inside the parent. */
export function encodeRequest(controller: Record<string, unknown>, parent: K8sObject, finalizing: boolean): string {
  return goEscape(JSON.stringify({ controller, parent: canonicalize(parent), children: {}, related: {}, finalizing }));
}

export async function syncParent(ctx: PassContext, namespace: string, name: string): Promise<PassResult> {
  const key = `${namespace}/${name}`;
  let parent = ctx.api.get(namespace, name);
  if (!parent) {
    ctx.backoff.forget(key);
    return { hook: undefined, statusChanged: false, finalizerChanged: false, childrenArray: false, removed: true };
  }
  const uid = parent.metadata.uid;
  const event = (type: EventRecord['type'], reason: string, message: string, source: EventRecord['source']): void => {
    ctx.audit.events.push({ type, reason, message, namespace, name, source });
  };

  // Step 2: finalizer first, so a later deletion always reaches the finalize hook.
  let finalizerChanged = false;
  const wantFinalizer = ctx.finalizeUrl !== undefined;
  const deleting = (obj: K8sObject): boolean => obj.metadata.deletionTimestamp !== undefined;
  const hasFinalizer = (obj: K8sObject): boolean => (obj.metadata.finalizers ?? []).includes(ctx.finalizerName);
  if (hasFinalizer(parent) !== wantFinalizer && !(wantFinalizer && deleting(parent))) {
    const write = await ctx.api.updateFinalizers(namespace, name, (list) =>
      wantFinalizer ? [...list, ctx.finalizerName] : list.filter((f) => f !== ctx.finalizerName));
    finalizerChanged = write.changed;
    ctx.audit.finalizerWrites += write.changed ? 1 : 0;
    parent = write.object ?? parent;
  }

  // Step 3: finalize replaces sync only for a deleting parent when a finalize hook exists.
  const hook: HookName = wantFinalizer && deleting(parent) ? 'finalize' : 'sync';
  const url = hook === 'finalize' ? (ctx.finalizeUrl as string) : ctx.syncUrl;
  const body = encodeRequest(ctx.controller, parent, hook === 'finalize');
  ctx.audit.hookCalls += 1;
  const cached = ctx.etagCache?.get(key);
  const headers = cached ? { ...ctx.headers, 'If-None-Match': cached.etag } : ctx.headers;
  const outcome = await postHook(url, body, { timeoutMs: ctx.timeoutMs, headers });
  if (outcome.kind === 'response' && ctx.etagCache) {
    // 304/412 count only when If-None-Match was sent: the cached body is applied as if returned.
    if (cached && (outcome.httpStatus === 304 || outcome.httpStatus === 412)) {
      ctx.audit.etagHits = (ctx.audit.etagHits ?? 0) + 1;
      Object.assign(outcome, { httpStatus: 200, body: cached.body });
    } else if (outcome.httpStatus === 200 && outcome.etag) ctx.etagCache.set(key, { etag: outcome.etag, body: outcome.body });
  }
  const httpStatus = outcome.kind === 'response' ? outcome.httpStatus : undefined;
  const call: CallRecord = { hook, namespace, name, durationMs: outcome.durationMs, requestBytes: Buffer.byteLength(body) };
  if (httpStatus !== undefined) call.httpStatus = httpStatus;
  ctx.audit.calls.push(call);

  const base = { hook, finalizerChanged, statusChanged: false, childrenArray: false, removed: false };
  const fail = (detail: string): PassResult => {
    const error = `${hook} hook failed (version=${ctx.hookVersion}): ${detail}`;
    call.error = error;
    event('Warning', 'SyncError', `Sync error: ${error}`, 'metacontroller');
    const result: PassResult = { ...base, error, backoffMs: ctx.backoff.when(key) };
    if (httpStatus !== undefined) result.httpStatus = httpStatus;
    return result;
  };
  if (outcome.kind === 'transport-error') return fail(outcome.message);
  if (outcome.httpStatus === 429) {
    // AddAfter(Retry-After): no event, and the failure count is neither raised nor reset.
    return { ...base, httpStatus: 429, retryAfterSeconds: parseRetryAfter(outcome.retryAfter, ctx.now().getTime()) };
  }
  if (outcome.httpStatus !== 200) return fail(`unsupported status code: ${outcome.httpStatus} body: ${outcome.body}`);
  const decoded = decodeHookResponse(outcome.body, { strict: ctx.strict, version: ctx.hookVersion, hookType: hook });
  if (!decoded.ok) return fail(decoded.error);

  const response = decoded.response;
  const result: PassResult = { ...base, httpStatus: 200, response, childrenArray: decoded.childrenArray };
  if (decoded.warnings.length > 0) result.decodeWarnings = decoded.warnings;
  // Step 5: one-shot resync.
  if (response.resyncAfterSeconds > 0) result.resyncAfterSeconds = response.resyncAfterSeconds;
  // Step 6: finalized removes the finalizer whichever hook said it.
  if (response.finalized) {
    result.finalized = true;
    if (hook === 'sync') {
      event('Warning', 'FinalizedBySyncHook', 'the sync hook returned finalized: true; Metacontroller strips the finalizer and re-adds it on the next sync (flapping)', 'harness');
    }
    const write = await ctx.api.updateFinalizers(namespace, name, (list) => list.filter((f) => f !== ctx.finalizerName));
    ctx.audit.finalizerWrites += write.changed ? 1 : 0;
    result.finalizerChanged ||= write.changed;
    parent = write.object ?? parent;
  }
  // Steps 7–8: no childResources rules, so desired children would be created but never observed.
  if ((response.children ?? []).length > 0) {
    event('Warning', 'ChildrenWithoutChildResources', `the hook returned ${response.children?.length} children but the controller declares no childResources`, 'harness');
  }
  // Step 9: replace the status, with observedGeneration from the parent this pass worked on.
  const status: Record<string, unknown> = { ...(response.status ?? {}), observedGeneration: parent.metadata.generation };
  result.statusChanged = await writeStatus(ctx, namespace, name, uid, status);
  ctx.audit.statusWrites += result.statusChanged ? 1 : 0;
  ctx.backoff.forget(key);
  const after = ctx.api.get(namespace, name);
  result.removed = !after || after.metadata.uid !== uid;
  return result;
}

/** Tries of AtomicStatusUpdate: retry.DefaultBackoff has 5 steps. */
const STATUS_WRITE_TRIES = 5;

/**
 * AtomicStatusUpdate: a live GET, nothing when the status is already equal, else a PUT to /status on the
 * resourceVersion just read; a Conflict (someone wrote in between) reads again. NotFound and a Conflict left
 * after the last try are swallowed, as Metacontroller does.
 */
async function writeStatus(ctx: PassContext, namespace: string, name: string, uid: string | undefined, status: Record<string, unknown>): Promise<boolean> {
  for (let attempt = 1; attempt <= STATUS_WRITE_TRIES; attempt++) {
    const live = await ctx.api.read(namespace, name);
    if (!live || live.metadata.uid !== uid || jsonDeepEqual(live.status, status)) return false;
    try {
      const options = { fieldManager: 'metacontroller', resourceVersion: live.metadata.resourceVersion };
      return (await ctx.api.updateStatus(namespace, name, status, options)).changed;
    } catch (error) {
      const code = (error as ApiError).code;
      if (code === 404) return false;
      if (code !== 409) throw error;
    }
  }
  return false;
}
