// The finalize hook's core: remove the model from wadm when the resource is deleted, if the
// deletion policy says so and the model is ours. Same shape as decideSync.
import type { LatticeFacts } from './facts.js';
import { OWNER_ANNOTATION } from './names.js';
import type { Verdict } from './status.js';
import { respond, type Prepared, type Step } from './sync.js';
import * as verdicts from './reasons.js';

/** As src/validate.ts: one NATS token of at most 253 characters (lattices have at most 128). */
const TOKEN = /^[-\w]{1,253}$/;

export function decideFinalize(prepared: Prepared, facts: LatticeFacts, now: number): Step {
  const { ref, lattice } = prepared;
  const done = (reason: string, message: string): Step => ({
    answer: respond(prepared, { phase: 'Undeployed', ready: { status: 'False', reason, message }, pace: 'settled' }, now, true),
  });
  const waiting = (verdict: Verdict): Step => ({ answer: respond(prepared, verdict, now, false) });

  if (prepared.deletionPolicy === 'Orphan') {
    return done('Orphaned', `Left in wadm as it is (deletionPolicy: Orphan)`);
  }
  // wadm could never have stored a model under a name or lattice that is not a subject token.
  if (!TOKEN.test(ref.name) || !TOKEN.test(lattice)) return done('Deleted', 'Nothing to delete: the name or lattice was never valid for wadm');
  // Nothing is ever sent to a lattice the namespace may not use, not even a delete.
  if (!prepared.latticeAllowed) return done('LatticeNotAllowed', `Left in wadm: namespace "${ref.namespace}" may not use lattice "${lattice}"`);
  if (facts.unavailable) return waiting(verdicts.unavailable(lattice, facts.unavailable, prepared.rendered?.version, prepared.previousStatus));
  if (facts.model === undefined) return { action: { kind: 'read-model' } };
  if (facts.model === null) return done('Deleted', `Deleted from wadm lattice "${lattice}"`);
  const owner = `${ref.namespace}/${ref.name}`;
  if (facts.model.latest.owner !== owner) {
    const holder = facts.model.latest.owner ?? `nobody (no ${OWNER_ANNOTATION} annotation)`;
    return done('NotOwned', `Left in wadm: application "${ref.name}" in lattice "${lattice}" belongs to ${holder}`);
  }
  if (facts.rejected) {
    return waiting({
      phase: 'Failed',
      ready: { status: 'False', reason: 'DeleteFailed', message: `wadm refused to delete the application: ${facts.rejected.message}` },
      stalled: { reason: 'DeleteFailed', message: `wadm refused to delete the application: ${facts.rejected.message}` },
      pace: 'stalled',
    });
  }
  return { action: { kind: 'delete', version: null } };
}
