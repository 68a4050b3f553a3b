// The core's entry: from (one hook call, what we know of wadm so far) to the next step. Pure: no
// I/O, no clock (the call carries the time), inputs never mutated. The HTTP shell runs the steps.
//
// Glossary
//   Identity       who an application is (ref, owner, lattice, deletionPolicy), from any spec
//   Application    the one shape of an application: its Identity, and for a valid spec its settings
//                  and rendered manifest (application.ts); ValidSpec is it before rendering
//   Call           one hook call: the application, the policy's word, the previous status, the time
//   LatticeFacts   what this call knows of wadm so far; the shell folds each result in (facts.ts)
//   Step           what to do next: an Action (read or write) for the shell, or the answer
//   Verdict        what the core concluded, with a Reason from the catalogue (reasons.ts)
//   former lattice one the application was in before its lattice changed (moves.ts)
//
// Two rules keep every replica's answer the same for the same state of wadm:
//   - ownership is history: a model is the resource's whose owner annotation its oldest version
//     carries (ownership.ts);
//   - writes are decided on facts wadm gave during this call, never on remembered ones (but for
//     the sizes of versions, which never change while a version exists: budget.ts).
import type { Application, Call } from './application.js';
import { exhausted, withFormer, type Decision, type Step } from './answer.js';
import { roomForPut } from './budget.js';
import type { Drift, LatticeFacts, ModelFacts, Write } from './facts.js';
import { collision, indexReader, modelNameOf, nameCollision, shadowedLattice, squatter, unreadableKey } from './collisions.js';
import { awaitingReport } from './evidence.js';
import { adopts, newestOwned, ourStray, ownership, prunable, strayVersion, withOurStray } from './ownership.js';
import { verdict, type Verdict } from './reasons.js';
import * as say from './reasons.js';
import { formerLattices, whileMoving } from './moves.js';
import { explainPlacement, unplaceable } from './placement.js';
import { fromWadm, healedBefore, healedDrift, justDeployed } from './status.js';
import { fromSummary } from './summary.js';

export type { Step } from './answer.js';
export { respond } from './answer.js';
export { decideFinalize } from './finalize.js';

type ValidApplication = Extract<Application, { valid: true }>;

export function decideSync(call: Call, facts: LatticeFacts): Step {
  if (facts.exhausted) return exhausted(call, facts, false);
  const here = syncHere(call, facts);
  if ('action' in here) return here;
  // Former lattices are cleaned only once wadm reports this one holds what the spec asks: a move
  // never leaves the application running nowhere, even to a lattice where nothing can run.
  if (!holdsSpec(call, facts, here.verdict)) return withFormer(call, facts, whileMoving(call, here.verdict), undefined);
  return withFormer(call, facts, here.verdict, call.app.deletionPolicy === 'Orphan' ? 'undeploy' : 'delete');
}

function syncHere(call: Call, facts: LatticeFacts): Decision {
  const { app } = call;
  if (!app.valid) return { verdict: verdict('InvalidSpec', `Invalid spec: ${app.problems.join('; ')}`) };
  if (call.latticeRefused) return { verdict: say.latticeNotAllowed(app.ref.namespace, app.lattice, call.latticeRefused) };
  const { version } = app.manifest;
  if (call.maxPayloadBytes !== undefined && say.putBytes(app.manifest) > call.maxPayloadBytes) {
    return { verdict: say.manifestTooLarge(app.manifest, call.maxPayloadBytes) };
  }
  if (facts.unavailable) return whyUnavailable(call, app, facts);
  if (facts.model === undefined) {
    // A settled application after a restart: the lattice's list may answer it (summary.ts).
    const summarised = fromSummary(call, app, facts);
    if (summarised === 'answer') return reported(call, app, facts);
    if (summarised) return summarised;
    // After a put that raced another (facts.ts): what wadm holds now, never what we remember. So
    // too for an edit: a write follows, and writes are decided on what wadm says in the call, so
    // the remembered model (and the probe of its lattice it may cost) would only delay that read.
    if (facts.raced) return { action: { kind: 'read-model', fresh: true } };
    return { action: { kind: 'read-model', ...(edited(call, app) && { fresh: true }), ...lastDeployed(call, app) } };
  }
  const model = facts.model;
  const squatted = model === null ? undefined : squatter(modelNameOf(app), model);
  if (squatted) return { verdict: nameCollision(app, squatted, version, ourStray(app, model!)) };
  if (model !== null) {
    const owner = ownership(app, model, version, adopts(app));
    if ('read' in owner) return { action: { kind: 'read-version', version: owner.read } };
    if (owner.is === 'foreign') return { verdict: withOurStray(app, model, say.ownershipConflict(app, owner.owners, version)) };
  }
  if (facts.rejected) return { verdict: say.rejected(facts.rejected.step, facts.rejected.message, version, model) };
  const conflict = pinnedConflict(app, model);
  if (conflict) return 'read' in conflict ? { action: { kind: 'read-version', version: conflict.read } } : { verdict: conflict.verdict };
  // Another's version in our model, left by a put that raced ours: removed before anything else.
  const stray = model === null || facts.pruneBlocked ? undefined : strayVersion(app, model);
  if (stray && 'read' in stray) return { action: { kind: 'read-version', version: stray.read } };
  if (stray) return { action: model!.remembered ? { kind: 'read-model', fresh: true } : { kind: 'delete', version: stray.delete } };

  const next = nextWrite(call, app, model, facts);
  // Remembered facts may miss a `wash app put` (wadm announces none): ask wadm before writing.
  if (next && model?.remembered) return { action: { kind: 'read-model', fresh: true } };
  if (next && 'verdict' in next) return next;
  // Only the first put creates wadm keys: only it needs to know whether they are taken.
  if (next && 'kind' in next && next.kind === 'put' && model === null) {
    const taken = firstPut(call, app, facts);
    if (taken) return taken;
  }
  if (next) return 'read' in next ? { action: { kind: 'read-version', version: next.read } } : { action: next };
  if (app.suspend) return { verdict: say.suspended(version) };
  // Whatever wadm says right after our own deploy predates it: no need to ask (on a cold start
  // with thousands of applications, one wadm request in four).
  const deploy = facts.writes.find(
    (w): w is Extract<Write, { kind: 'deploy' }> => w.kind === 'deploy' && w.lattice === undefined && w.version === version,
  );
  if (deploy) return { verdict: justDeployed(version, deploy.replacing && healedDrift(deploy.replacing), facts.deployedAt ?? call.now) };
  return reported(call, app, facts);
}

/**
 * The spec asks for another version than the resource's last answer spoke of: an edit. (A first
 * call has no answer to compare: it may be another resource's, whose remembered model serves it.)
 */
function edited(call: Call, app: ValidApplication): boolean {
  const version = (call.previousStatus as { version?: unknown } | null | undefined)?.version;
  return typeof version === 'string' && version !== app.manifest.version;
}

/**
 * The version the resource's last answer found deployed in this lattice, when not the desired one:
 * a deploy would replace it, and its owner decides how, so a read of the model needs its facts.
 * (The version the last answer asked for may never have been put: naming it could cost a read.)
 */
function lastDeployed(call: Call, app: ValidApplication): { deployed: string } | undefined {
  const lattice = (call.previousStatus as { lattice?: unknown } | null | undefined)?.lattice;
  const deployed = lattice === app.lattice ? previousDeployed(call.previousStatus) : undefined;
  return deployed !== undefined && deployed !== '' && deployed !== app.manifest.version ? { deployed } : undefined;
}

/** The version is deployed as wanted: what wadm reports of it decides, once read. */
function reported(call: Call, app: ValidApplication, facts: LatticeFacts): Decision {
  const { version } = app.manifest;
  if (facts.status === undefined) return { action: { kind: 'read-status' } };
  // Still waiting for wadm to speak of the deploy (evidence.ts): keep saying what drift it healed.
  const since = awaitingReport(call, version, facts.status);
  if (since !== undefined) return { verdict: justDeployed(version, healedBefore(call.previousStatus, version), since) };
  const wadmSays = fromWadm(version, app.lattice, facts.status);
  if (!unplaceable(wadmSays)) return { verdict: wadmSays };
  // No host satisfies a spread: say what the hosts have (heard, never asked: no wadm request).
  if (facts.hosts === undefined) return { action: { kind: 'read-hosts' } };
  return { verdict: explainPlacement(wadmSays, app.lattice, app.manifest.spreads ?? [], facts.hosts, call.now) };
}

/**
 * The current lattice has what the spec asks: wadm reports the desired version deployed (not
 * merely acknowledged: a lattice without hosts acknowledges and runs nothing), or nothing while
 * suspended.
 */
function holdsSpec(call: Call, facts: LatticeFacts, v: Verdict): boolean {
  const { app } = call;
  if (!app.valid) return false;
  if (app.suspend) return v.reason === 'Suspended';
  return v.reason === 'Deployed' && v.deployedVersion === app.manifest.version && facts.model?.deployedVersion === app.manifest.version;
}

/**
 * wadm could not be asked, or refused. A storage error reading our own key is a collision only once
 * wadm shows the key holds another lattice's index (collisions.ts unreadableKey): else an outage.
 */
function whyUnavailable(call: Call, app: ValidApplication, facts: LatticeFacts): Decision {
  const cause = facts.unavailable!;
  const { version } = app.manifest;
  if (cause.reason === 'NotPermitted')
    return { verdict: say.latticeNotPermitted(app.lattice, cause.message, version, call.previousStatus) };
  const key = unreadableKey(modelNameOf(app), facts);
  if (key && 'action' in key) return key;
  if (key && 'holds' in key) return { verdict: nameCollision(app, collision(modelNameOf(app), { storedName: null })!, version) };
  return { verdict: say.unavailable(app.lattice, key?.unknown ?? cause, version, call.previousStatus) };
}

/**
 * Before the first put: our own key was read (empty), so no lattice named like it has an index
 * (wadm never deletes an index once written); what remains is whether our lattice's index key
 * holds another lattice's model, read through the one model name that maps to it, and whether the
 * policy may yet create a lattice named like our key.
 */
function firstPut(call: Call, app: ValidApplication, facts: LatticeFacts): Decision | undefined {
  const name = modelNameOf(app);
  const reader = indexReader(app.lattice);
  const ownIndex = facts.keys?.[app.lattice];
  if (reader && ownIndex === undefined) return { action: { kind: 'read-key', key: reader } };
  const found = collision(name, { ownIndex, shadowedByPolicy: call.latticeNamed?.(shadowedLattice(name)) ?? false });
  return found && { verdict: nameCollision(app, found, app.manifest.version) };
}

/** A pinned name says nothing about content: compare the hash we stored when we put it. */
function pinnedConflict(app: ValidApplication, model: ModelFacts | null): { read: string } | { verdict: Verdict } | undefined {
  const { version, contentHash } = app.manifest;
  if (app.pinnedVersion === undefined || model === null || !model.versions.includes(version)) return undefined;
  // Own properties only: a version named `constructor` or `__proto__` is on every object.
  if (!Object.hasOwn(model.known, version)) return { read: version };
  const stored = model.known[version]!;
  if (stored.contentHash === contentHash) return undefined;
  // Put outside Kubernetes (`wash app deploy`): wadm keeps no hash to compare, and a version is
  // never put twice, so an adopting resource cannot take it over under the same name.
  const message =
    stored.owner === null && adopts(app)
      ? `version "${version}" was put outside Kubernetes, so this resource cannot adopt it under the same version: remove the pinned version (spec.version or the version annotation; \`convert --adopt\` leaves it out) or pin a version wadm does not have`
      : `version "${version}" already exists in wadm with different content: change spec.version to publish this spec`;
  return { verdict: verdict('VersionConflict', message, { version }) };
}

/** The write that brings wadm closer to the spec, a version to read first, a refusal, or nothing left to do. */
function nextWrite(
  call: Call,
  app: ValidApplication,
  model: ModelFacts | null,
  facts: LatticeFacts,
): Write | { read: string } | { verdict: Verdict } | undefined {
  const { version } = app.manifest;
  if (app.suspend) return model?.deployedVersion ? { kind: 'undeploy' } : undefined;
  if (model === null || !model.versions.includes(version)) return putWithRoom(call, app, model, facts);
  if (model.deployedVersion !== version) {
    const deployed = model.deployedVersion;
    if (deployed !== null && !Object.hasOwn(model.known, deployed)) return { read: deployed };
    const adopting = takenOver(app, model, call.previousStatus);
    if (adopting !== undefined) return { kind: 'deploy', version, adopting };
    const replacing = drift(app, model, call);
    if (replacing) return { kind: 'deploy', version, replacing };
    const moving = formerLattices(call)[0];
    return moving === undefined ? { kind: 'deploy', version } : { kind: 'deploy', version, moving };
  }
  return facts.pruneBlocked ? undefined : nextPrune(app, model);
}

/** The put, once wadm's stored value of the model has room for it (budget.ts). */
function putWithRoom(
  call: Call,
  app: ValidApplication,
  model: ModelFacts | null,
  facts: LatticeFacts,
): Write | { read: string } | { verdict: Verdict } {
  const { version, bytes, contentHash } = app.manifest;
  const room = roomForPut(
    model,
    { version, bytes, owner: app.owner, revisionHistoryLimit: app.revisionHistoryLimit },
    call.maxPayloadBytes,
  );
  if ('read' in room) return room;
  if ('tooLarge' in room) return { verdict: say.modelTooLarge(version, room.tooLarge, call.maxPayloadBytes!, model!.deployedVersion) };
  if ('prune' in room) {
    // wadm refused to delete an old version: nothing else makes room, and a put would go unanswered.
    const refused = facts.failed.find(({ write }) => write.kind === 'delete' && write.lattice === undefined);
    if (facts.pruneBlocked && refused) return { verdict: say.rejected('delete', refused.reason, version, model) };
    return { kind: 'delete', version: room.prune };
  }
  return { kind: 'put', version, body: call.body(), owner: app.owner, contentHash, bytes, name: app.ref.name };
}

/**
 * The unowned version an adopting resource replaces with its first deploy: the version deployed
 * outside Kubernetes (`wash app deploy`) that the resource was annotated to take over, while no
 * status of the resource ever named a deployed version. Not drift: nothing changed behind its back.
 */
function takenOver(app: ValidApplication, model: ModelFacts, previousStatus: unknown): string | undefined {
  const deployed = model.deployedVersion;
  if (!adopts(app) || deployed === null || model.known[deployed]!.owner !== null) return undefined;
  return previousDeployed(previousStatus) === undefined ? deployed : undefined;
}

function previousDeployed(previousStatus: unknown): string | undefined {
  const previous = (previousStatus as { deployedVersion?: unknown } | null | undefined)?.deployedVersion;
  return typeof previous === 'string' ? previous : undefined;
}

/**
 * What wadm had deployed instead of the desired version because of a change outside Kubernetes:
 * a version that is not ours, or anything else while our last status said the desired version
 * was deployed. (A version of ours deployed before an edit is the edit's own progress.)
 */
function drift(app: ValidApplication, model: ModelFacts, call: Call): Drift | undefined {
  const deployed = model.deployedVersion;
  if (deployed !== null && model.known[deployed]!.owner !== app.owner) return { deployed };
  // While a move is under way the last status may speak of the former lattice: the deploy here is
  // the move, not a change made outside Kubernetes.
  if (formerLattices(call).length > 0) return undefined;
  return previousDeployed(call.previousStatus) === app.manifest.version ? { deployed } : undefined;
}

/**
 * wadm never prunes: delete the oldest versions that are neither deployed, desired, nor the newest
 * of ours (the owner annotation that makes the model ours must stay), nor the oldest while the next
 * is not known to be ours (ownership.ts prunable).
 */
function nextPrune(app: ValidApplication, model: ModelFacts): Write | { read: string } | undefined {
  if (model.versions.length <= app.revisionHistoryLimit) return undefined;
  const keep = new Set([app.manifest.version, model.deployedVersion, newestOwned(model, app.owner)]);
  const pruning = prunable(
    model,
    app.owner,
    model.versions.filter((v) => !keep.has(v)),
  );
  if ('read' in pruning) return pruning;
  return pruning[0] === undefined ? undefined : { kind: 'delete', version: pruning[0] };
}

/**
 * What the shell should remember of the model after a call: a model wadm described during this
 * call and that is ours (an absent or foreign one can change without any event); null to forget
 * what was remembered; only the sizes of its versions when wadm stopped answering mid-call (the
 * model may have changed since, but a version's size stays true while it exists, and a retry
 * would otherwise read each again: with a slow wadm, no retry would get further); 'unchanged'
 * when the call learnt nothing new about the model.
 */
export function memorable(call: Call, facts: LatticeFacts): ModelFacts | null | { sizesOf: ModelFacts } | 'unchanged' {
  const { model } = facts;
  if (model === undefined || model?.remembered) return 'unchanged';
  if (model === null) return null;
  if (facts.unavailable || facts.exhausted) return { sizesOf: model };
  const owner = ownership(call.app, model, call.app.valid ? call.app.manifest.version : undefined, adopts(call.app));
  return 'is' in owner && owner.is === 'ours' ? model : null;
}
