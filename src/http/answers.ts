// The one owner of "may I reuse what I know?" on the hook's hot path: the key an answer is kept
// under, which answers are kept (settled ones), and when one may be given again. One entry per
// object (uid), bounded by CACHE_ENTRIES:
//   - the Application derived from the object, reused while what derivation reads is unchanged
//     (the same resourceVersion, or the same fingerprint after a status-only write);
//   - the serialised answer of its last settled call: one that changed nothing in wadm, asked for
//     no resync and was not unavailable, computed while what this replica knows of the application
//     did not change (the Knowledge stamp before and after are the same object).
// A kept answer is given again only while everything it was computed from is unchanged:
//   - the object (resourceVersion) and the hook;
//   - the lattice policy as loaded (a reloaded file is a new object: wiring/files.ts);
//   - the NATS server's max_payload (the size check depends on it);
//   - the Knowledge stamp: lattice/knowledge.ts opens with every event that replaces it.
// An answer that needed nothing from wadm (an invalid spec, a denied lattice) has no stamp.
import { hash } from 'node:crypto';
import { applicationOf, type Application } from '../core/application.js';
import type { Run } from '../core/steps.js';
import { Lru } from '../plumbing/lru.js';
import type { HookRequest, Parent } from '../schema/hook.js';

export interface Answer {
  json: string;
  etag: string;
}

/** What a settled answer depends on besides the object, each read afresh for every call. */
export interface ReuseInputs {
  /** The lattice policy as loaded: the same object while the file is unchanged. */
  policy(): unknown;
  maxPayloadBytes(): number | undefined;
  /** What this replica knows of the application, as one identity; absent: no Knowledge, nothing that needed wadm is kept. */
  stamp?(lattice: string, name: string): object | undefined;
}

/** An answer to give again, or how to keep the one about to be computed. */
export type Consulted = { reused: Answer } | { reused: undefined; record(run: Run): Answer };

/** What a settled answer was computed from, besides what Knowledge stamps. */
interface AnswerKey {
  resourceVersion: string;
  hook: string;
  policy: unknown;
  /** The NATS server's max_payload: the size check depends on it. */
  maxPayloadBytes: number | undefined;
}

/** Always all four fields, as object literals: a spread plus a field gives each entry a V8 hidden class of its own. */
interface Entry {
  resourceVersion: string | undefined;
  /** A hash of what derivation reads, the generation too (a rollback brings earlier content back under a new one). */
  content: string;
  app: Application;
  settled: Settled | undefined;
}

/**
 * A settled answer with what it was computed from, in one object rather than a key, a record and
 * an answer (60 bytes less per application kept: docs/benchmarks-history.md, eighth round of
 * issue 15).
 */
interface Settled extends AnswerKey, Answer {
  /** null: the answer needed nothing from wadm (an invalid spec, a denied lattice). */
  stamp: object | null;
}

export function answerOf(response: object): Answer {
  const json = JSON.stringify(response);
  return { json, etag: `"${hash('sha1', json, 'base64url')}"` };
}

export class Answers {
  private readonly entries: Lru<string, Entry>;
  /**
   * The put body of the last Application derived, which entries do not keep (most of an entry's
   * size): a new application's call needs it moments later for its put, and would otherwise
   * validate and render its spec a second time. One body at most, whatever the load.
   */
  private fresh: { app: Application; body: string } | undefined;

  constructor(
    capacity: number,
    private readonly defaultLattice: string,
    private readonly inputs: ReuseInputs,
  ) {
    this.entries = new Lru(capacity);
  }

  get size(): number {
    return this.entries.size;
  }

  get evictions(): number {
    return this.entries.evictions;
  }

  /** The object's Application, derived again only when what derivation reads has changed. */
  application(parent: Parent): Application {
    const { uid, resourceVersion } = parent.metadata;
    if (uid === undefined) return applicationOf(parent, this.defaultLattice).app;
    const cached = this.entries.get(uid);
    if (cached && resourceVersion !== undefined && cached.resourceVersion === resourceVersion) return cached.app;
    const content = fingerprint(parent);
    if (content === undefined) return applicationOf(parent, this.defaultLattice).app;
    // A status write changes resourceVersion but not what derivation reads.
    if (cached?.content === content) {
      this.entries.set(uid, { resourceVersion, content, app: cached.app, settled: cached.settled });
      return cached.app;
    }
    const { app, body } = applicationOf(parent, this.defaultLattice);
    this.entries.set(uid, { resourceVersion, content, app, settled: undefined });
    this.fresh = body === undefined ? undefined : { app, body };
    return app;
  }

  /** The put body of this Application if it was the last one derived (and only once). */
  takeBody(app: Application): string | undefined {
    const fresh = this.fresh;
    if (fresh?.app !== app) return undefined;
    this.fresh = undefined;
    return fresh.body;
  }

  /**
   * The answer kept for this call's object if nothing it depends on changed; else how to record
   * the computed one. null: an object without uid or resourceVersion is never reused.
   */
  consult(hook: string, request: HookRequest): Consulted | null {
    const { uid, resourceVersion } = request.parent.metadata;
    if (uid === undefined || resourceVersion === undefined) return null;
    const key: AnswerKey = { resourceVersion, hook, policy: this.inputs.policy(), maxPayloadBytes: this.inputs.maxPayloadBytes() };
    const stamp = () => {
      const app = this.application(request.parent);
      return this.inputs.stamp?.(app.lattice, app.ref.name);
    };
    const settled = this.entries.get(uid)?.settled;
    if (settled && sameKey(settled, key) && (settled.stamp === null || settled.stamp === stamp())) return { reused: settled };
    const before = stamp();
    return { reused: undefined, record: (run) => this.record(uid, key, before, stamp, run) };
  }

  /** Keeps a settled answer computed while the stamp did not change (null: it asked wadm nothing). */
  private record(uid: string, key: AnswerKey, before: object | undefined, stamp: () => object | undefined, run: Run): Answer {
    const computed = answerOf(run.response);
    const after = run.actions.length === 0 ? null : stamp();
    if (isSettled(run) && (after === null || (after !== undefined && after === before))) return this.keep(uid, key, after, computed);
    this.forget(uid);
    return computed;
  }

  /** Keeps the answer for reuse; returns the answer as kept (the object later calls get back). */
  private keep(uid: string, key: AnswerKey, stamp: object | null, answer: Answer): Answer {
    const entry = this.entries.get(uid);
    if (!entry) return answer;
    const { resourceVersion, hook, policy, maxPayloadBytes } = key;
    const settled: Settled = { resourceVersion, hook, policy, maxPayloadBytes, stamp, json: answer.json, etag: answer.etag };
    this.entries.set(uid, { resourceVersion: entry.resourceVersion, content: entry.content, app: entry.app, settled });
    return settled;
  }

  private forget(uid: string): void {
    const entry = this.entries.get(uid);
    if (entry?.settled)
      this.entries.set(uid, { resourceVersion: entry.resourceVersion, content: entry.content, app: entry.app, settled: undefined });
  }
}

/** Changed nothing in wadm, asks for no resync, and wadm answered: the same call would answer the same. */
function isSettled(run: Run): boolean {
  return run.response.resyncAfterSeconds === undefined && run.facts.writes.length === 0 && !run.facts.unavailable;
}

function sameKey(a: AnswerKey, b: AnswerKey): boolean {
  return a.resourceVersion === b.resourceVersion && a.hook === b.hook && a.policy === b.policy && a.maxPayloadBytes === b.maxPayloadBytes;
}

function fingerprint(parent: Parent): string | undefined {
  const { namespace, name, generation, labels, annotations } = parent.metadata;
  // The status's lattice is where an application without spec.lattice stays (validate.ts latticeOf).
  const current = (parent.status as { lattice?: unknown } | null | undefined)?.lattice;
  try {
    return hash('sha1', JSON.stringify([namespace, name, generation, labels, annotations, parent.spec, current]), 'base64');
  } catch {
    return undefined; // too deep to serialise: derivation reports it
  }
}
