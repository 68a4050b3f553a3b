// The core's entry: from (one hook call, what we know of wadm so far) to the next step. Pure: no
// I/O, no clock (the call carries the time), inputs never mutated. The HTTP shell runs the steps.
//
// Glossary
//   Application  the application as its resource says it: validated, rendered (application.ts)
//   Call         one hook call: the application, the policy's word, the previous status, the time
//   LatticeFacts what this call knows of wadm so far; the shell folds each result in (facts.ts)
//   Step         what to do next: an Action (read or write) for the shell, or the answer
//   Verdict      what the core concluded, with a Reason from the catalogue (reasons.ts)
//
// Two rules keep every replica's answer the same for the same state of wadm:
//   - ownership is history: a model is ours when any version carries our owner annotation;
//   - writes are decided on facts wadm gave during this call, never on remembered ones.
import type { HookResponse } from '../schema/hook.js';
import type { Application, Call } from './application.js';
import type { Action, Drift, LatticeFacts, ModelFacts, Write } from './facts.js';
import { collision, nameCollision, shadowedLattice, type ModelName } from './collisions.js';
import { isWadmName } from './names.js';
import { verdict, type Verdict } from './reasons.js';
import * as say from './reasons.js';
import { buildStatus, fromWadm, justDeployed } from './status.js';

export type Step = { action: Action } | { answer: HookResponse };

type ValidApplication = Extract<Application, { valid: true }>;

export function decideSync(call: Call, facts: LatticeFacts): Step {
  const { app } = call;
  const answer = (v: Verdict): Step => ({ answer: respond(call, v) });
  if (!app.valid) return answer(verdict('InvalidSpec', `Invalid spec: ${app.problems.join('; ')}`));
  if (!call.latticeAllowed) return answer(say.latticeNotAllowed(app.ref.namespace, app.lattice));
  const { version } = app.manifest;
  if (call.maxPayloadBytes !== undefined && say.putBytes(app.manifest) > call.maxPayloadBytes) {
    return answer(say.manifestTooLarge(app.manifest, call.maxPayloadBytes));
  }
  if (facts.unavailable) return whyUnavailable(call, app, facts);
  if (facts.model === undefined) return { action: { kind: 'read-model' } };
  const model = facts.model;
  const squatted = model?.storedName === undefined ? undefined : collision(wadmName(app), { storedName: model.storedName });
  if (squatted) return answer(nameCollision(app, squatted, version));
  if (model !== null) {
    const owner = ownership(app, model, version);
    if ('read' in owner) return { action: { kind: 'read-version', version: owner.read } };
    if (owner.is === 'foreign') return answer(say.ownershipConflict(app, owner.owners, version));
  }
  if (facts.rejected) return answer(say.rejected(facts.rejected.step, facts.rejected.message, version, model));
  const conflict = pinnedConflict(app, model);
  if (conflict) return 'read' in conflict ? { action: { kind: 'read-version', version: conflict.read } } : answer(conflict.verdict);

  const write = nextWrite(call, app, model, facts);
  // Remembered facts may miss a `wash app put` (wadm announces none): ask wadm before writing.
  if (write && model?.remembered) return { action: { kind: 'read-model', fresh: true } };
  // Only the first put creates wadm keys: only it pays for asking whether they are taken.
  if (write && 'kind' in write && write.kind === 'put' && model === null) {
    const before = firstPut(call, app, facts);
    if (before) return before;
  }
  if (write) return 'read' in write ? { action: { kind: 'read-version', version: write.read } } : { action: write };
  if (app.suspend) return answer(say.suspended(version));
  // Whatever wadm says right after our own deploy predates it: no need to ask (on a cold start
  // with thousands of applications, one wadm request in four).
  const deploy = facts.writes.find((w): w is Extract<Write, { kind: 'deploy' }> => w.kind === 'deploy' && w.version === version);
  if (deploy) return answer(justDeployed(version, deploy.replacing && say.drift(deploy.replacing)));
  if (facts.status === undefined) return { action: { kind: 'read-status' } };
  // Still waiting for wadm to speak of our deploy: keep saying what drift it healed.
  if (facts.status.predatesDeploy) return answer(justDeployed(version, say.healedBefore(call.previousStatus, version)));
  return answer(fromWadm(version, app.lattice, facts.status));
}

export function decideFinalize(call: Call, facts: LatticeFacts): Step {
  const { app } = call;
  const done = (v: Verdict): Step => ({ answer: respond(call, v, true) });
  const waiting = (v: Verdict): Step => ({ answer: respond(call, v, false) });
  const where = `application "${app.ref.name}" in lattice "${app.lattice}"`;
  if (app.deletionPolicy === 'Orphan') return done(verdict('Orphaned', 'Left in wadm as it is (deletionPolicy: Orphan)'));
  // wadm could never have stored a model under a name or lattice that is not a subject token.
  if (!isWadmName(app.ref.name) || !isWadmName(app.lattice)) return done(verdict('Deleted', 'Nothing to delete: the name or lattice was never valid for wadm'));
  // Nothing is ever sent to a lattice the namespace may not use, not even a delete.
  if (!call.latticeAllowed) {
    return done(verdict('LatticeNotAllowed', `Left in wadm: namespace "${app.ref.namespace}" may not use lattice "${app.lattice}"`, { phase: 'Undeployed' }));
  }
  const version = app.valid ? app.manifest.version : undefined;
  if (facts.unavailable) {
    // Our key holding another lattice's index holds nothing of ours: the first put was refused.
    const { reason, during } = facts.unavailable;
    const shadowed = shadowedLattice({ lattice: app.lattice, name: app.ref.name });
    if (reason === 'StorageError' && during === 'read-model' && facts.indexes?.[shadowed] === undefined) return { action: { kind: 'read-index', lattice: shadowed } };
    if ((facts.indexes?.[shadowed] ?? 0) > 0) return done(verdict('Deleted', `Nothing to delete: the wadm key of ${where} is lattice "${shadowed}"'s list of applications`));
    return waiting(say.unavailable(app.lattice, facts.unavailable, version, call.previousStatus));
  }
  if (facts.model === undefined) return { action: { kind: 'read-model' } };
  if (facts.model === null) return done(verdict('Deleted', `Deleted from wadm lattice "${app.lattice}"`));
  const owner = ownership(app, facts.model, version);
  if ('read' in owner) return { action: { kind: 'read-version', version: owner.read } };
  if (owner.is === 'foreign') return done(verdict('NotOwned', `Left in wadm: ${where} ${say.heldBy(app, owner.owners)}`));
  if (facts.rejected) return waiting(verdict('DeleteFailed', `wadm refused to delete the application: ${facts.rejected.message}`));
  if (facts.model.remembered) return { action: { kind: 'read-model', fresh: true } };
  // One delete without a version removes every version, foreign ones included: the model is ours.
  return { action: { kind: 'delete', version: null } };
}

/**
 * wadm could not be asked. A storage error reading our own key may be wadm failing to parse
 * another lattice's index stored there: ask that lattice before calling it anything else. A
 * storage error while other lattices answer is this lattice's storage, not an outage.
 */
function whyUnavailable(call: Call, app: ValidApplication, facts: LatticeFacts): Step {
  const cause = facts.unavailable!;
  const { version } = app.manifest;
  const storage = cause.reason === 'StorageError';
  const shadowed = shadowedLattice(wadmName(app));
  if (storage && cause.during === 'read-model' && facts.indexes?.[shadowed] === undefined) return { action: { kind: 'read-index', lattice: shadowed } };
  const found = storage ? collision(wadmName(app), { storedName: null, shadowedModels: facts.indexes?.[shadowed] }) : undefined;
  if (found) return { answer: respond(call, nameCollision(app, found, version)) };
  // Only a read of our own key: a write's storage error may be a compare-and-set race worth a quick retry.
  if (storage && cause.isolated && cause.during === 'read-model') return { answer: respond(call, say.latticeStorageError(app.lattice, cause.message, version, call.previousStatus)) };
  return { answer: respond(call, say.unavailable(app.lattice, cause, version, call.previousStatus)) };
}

/** Before the first put: the lattice our key would shadow, and our own lattice's index. */
function firstPut(call: Call, app: ValidApplication, facts: LatticeFacts): Step | undefined {
  const name = wadmName(app);
  const shadowed = shadowedLattice(name);
  const unread = [shadowed, app.lattice].find((lattice) => facts.indexes?.[lattice] === undefined);
  if (unread !== undefined) return { action: { kind: 'read-index', lattice: unread } };
  const evidence = { shadowedModels: facts.indexes![shadowed], ownIndexUnreadable: facts.indexes![app.lattice] === null, shadowedByPolicy: call.latticeNamed?.(shadowed) ?? false };
  const found = collision(name, evidence);
  return found && { answer: respond(call, nameCollision(app, found, app.manifest.version)) };
}

function wadmName(app: ValidApplication): ModelName {
  return { lattice: app.lattice, name: app.ref.name };
}

export function respond(call: Call, v: Verdict, finalized?: boolean): HookResponse {
  const context = { generation: call.app.ref.generation, lattice: call.app.lattice, previous: call.previousStatus, now: call.now };
  const { status, resyncAfterSeconds } = buildStatus(context, v);
  const response: HookResponse = { status, children: [] };
  if (resyncAfterSeconds !== undefined) response.resyncAfterSeconds = resyncAfterSeconds;
  if (finalized !== undefined) response.finalized = finalized;
  return response;
}

/** A pinned name says nothing about content: compare the hash we stored when we put it. */
function pinnedConflict(app: ValidApplication, model: ModelFacts | null): { read: string } | { verdict: Verdict } | undefined {
  const { version, contentHash } = app.manifest;
  if (app.pinnedVersion === undefined || model === null || !model.versions.includes(version)) return undefined;
  // Own properties only: a version named `constructor` or `__proto__` is on every object.
  if (!Object.hasOwn(model.known, version)) return { read: version };
  if (model.known[version]!.contentHash === contentHash) return undefined;
  return { verdict: verdict('VersionConflict', `version "${version}" already exists in wadm with different content: change spec.version to publish this spec`, { version }) };
}

/** The write that brings wadm closer to the spec, a version to read first, or nothing left to do. */
function nextWrite(call: Call, app: ValidApplication, model: ModelFacts | null, facts: LatticeFacts): Write | { read: string } | undefined {
  const { version } = app.manifest;
  if (app.suspend) return model?.deployedVersion ? { kind: 'undeploy' } : undefined;
  if (model === null || !model.versions.includes(version)) {
    return { kind: 'put', version, body: call.body(), owner: app.owner, contentHash: app.manifest.contentHash };
  }
  if (model.deployedVersion !== version) {
    const deployed = model.deployedVersion;
    if (deployed !== null && !Object.hasOwn(model.known, deployed)) return { read: deployed };
    const replacing = drift(app, model, call.previousStatus);
    return replacing ? { kind: 'deploy', version, replacing } : { kind: 'deploy', version };
  }
  return facts.pruneBlocked ? undefined : nextPrune(app, model);
}

/**
 * What wadm had deployed instead of the desired version because of a change outside Kubernetes:
 * a version that is not ours, or anything else while our last status said the desired version
 * was deployed. (A version of ours deployed before an edit is the edit's own progress.)
 */
function drift(app: ValidApplication, model: ModelFacts, previousStatus: unknown): Drift | undefined {
  const deployed = model.deployedVersion;
  if (deployed !== null && model.known[deployed]!.owner !== app.owner) return { deployed };
  const previous = (previousStatus as { deployedVersion?: unknown } | null | undefined)?.deployedVersion;
  return previous === app.manifest.version ? { deployed } : undefined;
}

/**
 * wadm never prunes: delete the oldest versions that are neither deployed, desired, nor the newest
 * of ours (the owner annotation that makes the model ours must stay).
 */
function nextPrune(app: ValidApplication, model: ModelFacts): Write | undefined {
  if (model.versions.length <= app.revisionHistoryLimit) return undefined;
  const newestOurs = [...model.versions].reverse().find((v) => Object.hasOwn(model.known, v) && model.known[v]!.owner === app.owner);
  const keep = new Set([app.manifest.version, model.deployedVersion, newestOurs]);
  const oldest = model.versions.find((v) => !keep.has(v));
  return oldest === undefined ? undefined : { kind: 'delete', version: oldest };
}

/** Versions read to find our owner annotation before a model is called foreign. */
const MAX_OWNERSHIP_READS = 12;

type Ownership = { is: 'ours' } | { is: 'foreign'; owners: (string | null)[] } | { read: string };

/**
 * A model is ours when any version carries our owner annotation, or when every version is
 * unowned and the resource adopts it. Versions are read most telling first: the deployed one,
 * the desired one, then newest to oldest (the newest came with the model).
 */
function ownership(app: Application, model: ModelFacts, desired: string | undefined): Ownership {
  const known = Object.values(model.known);
  if (known.some((v) => v.owner === app.owner)) return { is: 'ours' };
  const candidates = [model.deployedVersion, desired, ...[...model.versions].reverse()];
  const unread = candidates.find((v): v is string => v != null && model.versions.includes(v) && !Object.hasOwn(model.known, v));
  if (unread !== undefined && known.length < MAX_OWNERSHIP_READS) return { read: unread };
  const adoptable = app.valid && app.adopt && known.every((v) => v.owner === null);
  return adoptable ? { is: 'ours' } : { is: 'foreign', owners: known.map((v) => v.owner) };
}

/**
 * What the shell should remember of the model after a call: a model wadm described during this
 * call and that is ours (an absent or foreign one can change without any event); null to forget
 * what was remembered; 'unchanged' when the call learnt nothing new about the model.
 */
export function memorable(call: Call, facts: LatticeFacts): ModelFacts | null | 'unchanged' {
  const { model } = facts;
  if (model === undefined || model?.remembered) return 'unchanged';
  if (model === null || facts.unavailable) return null;
  const owner = ownership(call.app, model, call.app.valid ? call.app.manifest.version : undefined);
  return 'is' in owner && owner.is === 'ours' ? model : null;
}
