// The answer of a hook call, assembled from the verdict for the application's own lattice and what
// its former lattices still need (moves.ts): the Step type the shell runs, and the response
// Metacontroller writes.
import type { HookResponse } from '../schema/hook.js';
import type { Call } from './application.js';
import { NO_FACTS, type Action, type LatticeFacts } from './facts.js';
import { formerLattices, retireFormer, type Cleanup } from './moves.js';
import { verdict, type Verdict } from './reasons.js';
import * as say from './reasons.js';
import { buildStatus } from './status.js';

export type Step = { action: Action } | { answer: HookResponse };

/** What the decision for one lattice comes to: the next action, or a verdict (and, finalizing, whether done). */
export type Decision = { action: Action } | { verdict: Verdict; finalized?: boolean };

/**
 * The answer, with the former lattices cleaned when `cleanup` says how (and carried over in the
 * status until they are), and what was done there appended to the message.
 */
export function withFormer(call: Call, facts: LatticeFacts, v: Verdict, cleanup: Cleanup | undefined, finalized?: boolean): Step {
  const former = formerLattices(call);
  if (former.length === 0 || cleanup === undefined) return { answer: respond(call, v, finalized, former) };
  const retired = retireFormer(call, facts, former, cleanup);
  if ('action' in retired) return retired;
  const said = { ...v, message: [v.message, ...retired.notes].join('; ') };
  if (finalized && retired.remaining.length > 0)
    return {
      answer: respond(call, { ...blockedFinalize(call, facts, retired.remaining[0]!), message: said.message }, false, retired.remaining),
    };
  return { answer: respond(call, said, finalized, retired.remaining) };
}

/** Why a finalize still waits for a former lattice: wadm refused the delete, NATS the request, or wadm could not be asked. */
function blockedFinalize(call: Call, facts: LatticeFacts, lattice: string): Verdict {
  const there = facts.former?.[lattice] ?? NO_FACTS;
  if (there.rejected) return verdict('DeleteFailed', there.rejected.message);
  const version = call.app.valid ? call.app.manifest.version : undefined;
  const cause = there.unavailable ?? { reason: 'BadReply', message: 'no answer' };
  if (cause.reason === 'NotPermitted') return say.deleteNotPermitted(lattice, cause.message, version, call.previousStatus);
  return say.unavailable(lattice, cause, version, call.previousStatus);
}

/**
 * The answer of a call that reached its bound of wadm requests: an outage of the lattice it was
 * asking, retried, with every former lattice kept (which were cleaned is not worth the risk) and,
 * at finalize, the finalizer kept.
 */
export function exhausted(call: Call, facts: LatticeFacts, finalizing: boolean): Step {
  const { requests, lattice = call.app.lattice } = facts.exhausted!;
  const version = call.app.valid ? call.app.manifest.version : undefined;
  const cause = {
    reason: 'BadReply',
    message: `wadm gave inconsistent answers over ${requests} requests in one hook call, so the call stopped there`,
  };
  const v = say.unavailable(lattice, cause, version, call.previousStatus);
  return { answer: respond(call, v, finalizing ? false : undefined, formerLattices(call)) };
}

export function respond(call: Call, v: Verdict, finalized?: boolean, formerLattices: string[] = []): HookResponse {
  const context = {
    generation: call.app.ref.generation,
    lattice: call.app.lattice,
    formerLattices,
    previous: call.previousStatus,
    now: call.now,
    identity: call.app.owner,
  };
  const { status, resyncAfterSeconds } = buildStatus(context, v);
  const response: HookResponse = { status, children: [] };
  // A finalized resource is gone: there is nothing to look at again.
  if (resyncAfterSeconds !== undefined && finalized !== true) response.resyncAfterSeconds = resyncAfterSeconds;
  if (finalized !== undefined) response.finalized = finalized;
  return response;
}
