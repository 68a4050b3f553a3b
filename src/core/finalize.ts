// The finalize hook's decision: delete what this resource owns in wadm (deletionPolicy Delete) or
// leave it (Orphan), in its lattice and in every former one, and say when the finalizer may go.
// Nothing is deleted that the resource does not own, or under a key another lattice's model holds.
import type { Call } from './application.js';
import { exhausted, respond, withFormer, type Decision, type Step } from './answer.js';
import { modelNameOf, shadowedLattice, squatter, unreadableKey } from './collisions.js';
import type { LatticeFacts } from './facts.js';
import { isWadmName } from './names.js';
import { adopts, ownership } from './ownership.js';
import { verdict, type Verdict } from './reasons.js';
import * as say from './reasons.js';

export function decideFinalize(call: Call, facts: LatticeFacts): Step {
  if (facts.exhausted) return exhausted(call, facts, true);
  const here = finalizeHere(call, facts);
  if ('action' in here) return here;
  const finalized = here.finalized === true;
  // Orphan leaves every lattice as it is; Delete deletes in the former ones too before letting go.
  if (finalized && call.app.deletionPolicy === 'Orphan') return { answer: respond(call, here.verdict, true) };
  return withFormer(call, facts, here.verdict, finalized ? 'delete' : undefined, finalized);
}

function finalizeHere(call: Call, facts: LatticeFacts): Decision {
  const { app } = call;
  const done = (v: Verdict): Decision => ({ verdict: v, finalized: true });
  const waiting = (v: Verdict): Decision => ({ verdict: v, finalized: false });
  const where = `application "${app.ref.name}" in lattice "${app.lattice}"`;
  if (app.deletionPolicy === 'Orphan') return done(verdict('Orphaned', 'Left in wadm as it is (deletionPolicy: Orphan)'));
  // wadm could never have stored a model under a name or lattice that is not a subject token.
  if (!isWadmName(app.ref.name) || !isWadmName(app.lattice))
    return done(verdict('Deleted', 'Nothing to delete: the name or lattice was never valid for wadm'));
  // Nothing is ever sent to a lattice the namespace may not use, not even a delete.
  if (call.latticeRefused) return done(say.latticeNotAllowed(app.ref.namespace, app.lattice, call.latticeRefused, true));
  const version = app.valid ? app.manifest.version : undefined;
  if (facts.unavailable) {
    const { reason, message } = facts.unavailable;
    if (reason === 'NotPermitted') return waiting(say.deleteNotPermitted(app.lattice, message, version, call.previousStatus));
    // Letting go needs wadm to show that nothing of ours is there: a storage error shows nothing.
    const key = unreadableKey(modelNameOf(app), facts);
    if (key && 'action' in key) return key;
    if (key && 'holds' in key) {
      return done(
        verdict(
          'Deleted',
          `Nothing to delete: the wadm key of ${where} is lattice "${shadowedLattice(modelNameOf(app))}"'s list of applications`,
        ),
      );
    }
    return waiting(say.unavailable(app.lattice, key?.unknown ?? facts.unavailable, version, call.previousStatus));
  }
  if (facts.model === undefined) return { action: { kind: 'read-model' } };
  if (facts.model === null) return done(verdict('Deleted', `Deleted from wadm lattice "${app.lattice}"`));
  // The key holds another lattice's model: delete would purge it with all its versions.
  const squatted = squatter(modelNameOf(app), facts.model);
  if (squatted)
    return done(
      verdict(
        'NotOwned',
        `Left in wadm: the wadm key "${squatted.key}" of ${where} holds an application of another lattice, never this resource's`,
      ),
    );
  const owner = ownership(app, facts.model, version, adopts(app));
  if ('read' in owner) return { action: { kind: 'read-version', version: owner.read } };
  if (owner.is === 'foreign') return done(verdict('NotOwned', `Left in wadm: ${where} ${say.heldBy(app, owner.owners)}`));
  if (facts.rejected) return waiting(verdict('DeleteFailed', `wadm refused to delete the application: ${facts.rejected.message}`));
  if (facts.model.remembered) return { action: { kind: 'read-model', fresh: true } };
  // One delete without a version removes every version, foreign ones included: the model is ours.
  return { action: { kind: 'delete', version: null } };
}
