// A resource whose lattice changes (spec.lattice, or DEFAULT_LATTICE for one that sets none) leaves
// its application in the lattice it was in. Where it was is remembered in the status, which we
// write and Metacontroller sends back in every call: `status.lattice` is the lattice of the last
// answer, `status.formerLattices` the earlier ones still to clean up. Once the current lattice holds
// what the spec asks (its version deployed, or nothing when suspended), each former lattice is
// cleaned of what this resource owns there: undeployed (deletionPolicy Orphan) or deleted (Delete);
// until then every answer says the application is left there, and why (whileMoving);
// finalize deletes in every one (Delete) or leaves them all (Orphan). What was done is said once,
// in the message of that answer; a lattice that could not be cleaned yet stays listed, and said.
import type { Call } from './application.js';
import { modelNameOf, squatter, unreadableKey } from './collisions.js';
import { NO_FACTS, type Action, type LatticeFacts } from './facts.js';
import { isWadmName } from './names.js';
import { byCodeUnits } from './order.js';
import { ownership } from './ownership.js';
import type { Verdict } from './reasons.js';

/** More is not a move history but a corrupted status: the hook sends requests to each. */
const MAX_FORMER_LATTICES = 16;

export type Cleanup = 'undeploy' | 'delete';

/** What the former lattices need: an action for one of them, or which remain and what was done. */
export type Retirement = { action: Action } | { remaining: string[]; notes: string[] };

/** The lattices this resource's application may still be in, besides its current one. */
export function formerLattices(call: Call): string[] {
  // wadm could never have stored a model under a name that is not a subject token.
  if (!isWadmName(call.app.ref.name)) return [];
  const previous = call.previousStatus as { lattice?: unknown; formerLattices?: unknown } | null | undefined;
  const names = new Set<string>();
  if (Array.isArray(previous?.formerLattices)) for (const l of previous.formerLattices) if (typeof l === 'string') names.add(l);
  if (typeof previous?.lattice === 'string') names.add(previous.lattice);
  names.delete(call.app.lattice);
  return [...names].filter(isWadmName).sort(byCodeUnits).slice(0, MAX_FORMER_LATTICES);
}

/** One former lattice after another: the next action, or what remains once none needs one. */
export function retireFormer(call: Call, facts: LatticeFacts, lattices: string[], cleanup: Cleanup): Retirement {
  const remaining: string[] = [];
  const notes: string[] = [];
  for (const lattice of lattices) {
    const step = retireOne(call, lattice, facts.former?.[lattice] ?? NO_FACTS, cleanup);
    if ('action' in step) return { action: { ...step.action, lattice } };
    if (!step.done) remaining.push(lattice);
    if (step.note !== undefined) notes.push(step.note);
  }
  return { remaining, notes };
}

/** One former lattice: an action for it, or whether it is clean (and what to say). */
type Retiring = { action: Action } | { done: boolean; note?: string };

/**
 * Cleans one former lattice with the care of a finalize: nothing sent where the policy forbids,
 * nothing touched that this resource does not own (no adoption here), wadm read afresh before any
 * write, and the lattice kept until wadm shows nothing of ours is left.
 */
function retireOne(call: Call, lattice: string, facts: LatticeFacts, cleanup: Cleanup): Retiring {
  const { app } = call;
  const where = `former lattice "${lattice}"`;
  // Nothing is sent where the policy forbids: whether anything of it is there is unknown (a
  // lattice the resource named by mistake held nothing), so nothing is said either.
  if (!call.allows(lattice)) return { done: true };
  const done = facts.writes.length > 0 ? `${cleanup === 'delete' ? 'deleted' : 'undeployed'} the application in ${where}` : undefined;
  if (facts.unavailable) {
    // Forgetting a lattice needs wadm to show that nothing of ours is there: a refusal or a storage error shows nothing.
    const key = unreadableKey(modelNameOf({ lattice, ref: app.ref }), facts);
    if (key && 'action' in key) return key;
    if (key && 'holds' in key) return { done: true };
    const { reason, message } = key?.unknown ?? facts.unavailable;
    return { done: false, note: `not yet cleaned up in ${where} (${reason}): ${message}; will retry` };
  }
  if (facts.model === undefined) return { action: { kind: 'read-model', fresh: true } };
  if (facts.model === null) return { done: true, ...(done && { note: done }) };
  if (squatter(modelNameOf({ lattice, ref: app.ref }), facts.model)) return { done: true };
  const owner = ownership(app, facts.model, undefined, false);
  if ('read' in owner) return { action: { kind: 'read-version', version: owner.read } };
  if (owner.is === 'foreign') return { done: true };
  if (facts.rejected)
    return { done: false, note: `wadm refused to ${facts.rejected.step} in ${where}: ${facts.rejected.message}; will retry` };
  if (cleanup === 'delete') return { action: { kind: 'delete', version: null } };
  if (facts.model.deployedVersion !== null) return { action: { kind: 'undeploy' } };
  return { done: true, ...(done && { note: done }) };
}

/**
 * The verdict for the new lattice while a former one is kept: wadm does not report the desired
 * version deployed here yet (just deployed, scaling, no hosts, a bad spec, an outage...), so the
 * application is left as it is where it was. Progress is a move in progress (Moving); any other
 * reason keeps its meaning, and both say what is kept.
 */
export function whileMoving(call: Call, v: Verdict): Verdict {
  const former = formerLattices(call);
  if (former.length === 0) return v;
  const lattices = former.map((l) => `"${l}"`).join(', ');
  const kept = `the application is left as it is in former lattice ${lattices} until wadm reports it deployed in lattice "${call.app.lattice}"`;
  if (v.reason !== 'Progressing' && v.reason !== 'Reconciling') return { ...v, message: `${v.message}; ${kept}` };
  return { ...v, reason: 'Moving', message: `Moving to lattice "${call.app.lattice}": ${v.message}; ${kept}` };
}
