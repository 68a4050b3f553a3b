// The settled fast path: the serialised answer of each object's last settled call, reused while
// the object (uid, resourceVersion), the lattice policy and everything known about the
// application in wadm (model and status cache entries, compared by identity) are unchanged.
// A resync of a settled application then costs a JSON.parse and a few lookups.
import { createHash } from 'node:crypto';
import { Lru } from '../core/lru.js';

export interface Answer {
  json: string;
  etag: string;
}

interface Memo {
  resourceVersion: string;
  hook: string;
  /** null: the answer did not depend on the lattice (an invalid spec, a denied lattice). */
  snapshot: unknown[] | null;
  policy: unknown;
  answer: Answer;
}

export function answerOf(response: object): Answer {
  const json = JSON.stringify(response);
  return { json, etag: `"${createHash('sha1').update(json).digest('base64url')}"` };
}

export class AnswerMemo {
  private readonly memos: Lru<string, Memo>;
  hits = 0;

  constructor(capacity: number) {
    this.memos = new Lru(capacity);
  }

  get size(): number {
    return this.memos.size;
  }

  find(uid: string, resourceVersion: string, hook: string, snapshot: () => unknown[] | undefined, policy: unknown): Answer | undefined {
    const memo = this.memos.get(uid);
    if (!memo || memo.resourceVersion !== resourceVersion || memo.hook !== hook || memo.policy !== policy) return undefined;
    if (memo.snapshot !== null && !sameSnapshot(memo.snapshot, snapshot())) return undefined;
    this.hits++;
    return memo.answer;
  }

  keep(uid: string, memo: Memo): void {
    this.memos.set(uid, memo);
  }

  forget(uid: string): void {
    this.memos.delete(uid);
  }
}

export function sameSnapshot(a: unknown[] | undefined, b: unknown[] | undefined): boolean {
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  return a.every((item, i) => item === b[i]);
}
