// The core of the hook: given the request and what we know of the lattice so far, decide the
// next step — read something, write something, or answer. Pure: no I/O, no clock (`now` is an
// input), inputs never mutated. src/reconcile.ts runs the steps against wadm.
import type { Action, LatticeFacts, Write } from './facts.js';
import type { ModelFacts } from '../lattice/wire.js';
import type { HookRequest, HookResponse, Parent } from '../schema/hook.js';
import { renderManifest, type RenderedManifest } from './manifest.js';
import { buildStatus, type Verdict } from './status.js';
import { latticeOf, refOf, validateParent, type DesiredApplication, type ResourceRef } from './validate.js';
import type { Tenancy } from './tenancy.js';
import * as verdicts from './reasons.js';

/**
 * What the parent's spec, labels and annotations alone determine: validation, the rendered
 * manifest and its version. The costly part of a call, so the shell caches it per object
 * (see src/derivations.ts).
 */
export interface Derived {
  ref: ResourceRef;
  lattice: string;
  /** Read even from an invalid spec: a resource with a typo elsewhere must still be deletable. */
  deletionPolicy: 'Delete' | 'Orphan';
  validation: { ok: true; app: Settings } | { ok: false; problems: string[] };
  /** The put body is dropped from cached derivations (see Derivations) and rendered again when needed. */
  rendered: (Pick<RenderedManifest, 'version' | 'contentHash'> & { body?: string }) | undefined;
}

/**
 * A valid application without its spec, labels and annotations: all a decision needs once the
 * manifest is rendered. Kept lean because thousands of these are cached.
 */
export type Settings = Omit<DesiredApplication, 'spec' | 'labels' | 'annotations'>;

/** Everything a decision needs from the request. */
export interface Prepared extends Derived {
  /** The lattice policy lets this namespace target this lattice: if not, nothing is sent to NATS. */
  latticeAllowed: boolean;
  previousStatus: unknown;
  /** The manifest to put: rarely needed (only when its version is absent), so rendered on demand. */
  body(): string;
}

export type Step = { action: Action } | { answer: HookResponse };

export function derive(parent: Parent, defaultLattice: string): Derived {
  const validation = validateParent(parent, defaultLattice);
  const common = {
    ref: refOf(parent),
    deletionPolicy: (parent.spec as { deletionPolicy?: unknown } | undefined)?.deletionPolicy === 'Orphan' ? ('Orphan' as const) : ('Delete' as const),
  };
  if (!validation.ok) return { ...common, lattice: latticeOf(parent, defaultLattice), validation, rendered: undefined };
  const { spec: _spec, labels: _labels, annotations: _annotations, ...settings } = validation.app;
  const { version, contentHash, body } = renderManifest(validation.app);
  return { ...common, lattice: settings.lattice, validation: { ok: true, app: settings }, rendered: { version, contentHash, body } };
}

export function prepare(request: HookRequest, tenancy: Tenancy, derived = derive(request.parent, tenancy.defaultLattice)): Prepared {
  return {
    ...derived,
    // Not cached: the policy file may change while the spec does not.
    latticeAllowed: tenancy.allows(derived.ref.namespace, derived.lattice),
    previousStatus: request.parent.status,
    body: () => derived.rendered?.body ?? derive(request.parent, tenancy.defaultLattice).rendered!.body!,
  };
}

export function decideSync(prepared: Prepared, facts: LatticeFacts, now: number): Step {
  const { validation, rendered } = prepared;
  const answer = (verdict: Verdict): Step => ({ answer: respond(prepared, verdict, now) });
  if (!validation.ok || rendered === undefined) return answer(verdicts.invalidSpec(validation.ok ? [] : validation.problems));
  const { app } = validation;
  if (!prepared.latticeAllowed) return answer(verdicts.latticeNotAllowed(app.ref.namespace, app.lattice));
  const { version } = rendered;
  if (facts.unavailable) return answer(verdicts.unavailable(app.lattice, facts.unavailable, version, prepared.previousStatus));
  if (facts.model === undefined) return { action: { kind: 'read-model' } };
  const model = facts.model;
  if (model !== null && !owns(app, model.latest.owner)) {
    return answer(verdicts.ownershipConflict(app.lattice, app.ref.name, model, version));
  }
  if (facts.rejected) return answer(verdicts.rejected(facts.rejected.step, facts.rejected.message, version, model));

  const exists = model !== null && model.versions.includes(version);
  if (exists && app.pinnedVersion !== undefined) {
    // A pinned name says nothing about content: compare the hash we stored when we put it.
    // Own properties only: a version named `constructor` or `__proto__` is on every object.
    const stored = model.latest.version === version ? model.latest : Object.hasOwn(facts.inspected, version) ? facts.inspected[version] : undefined;
    if (stored === undefined) return { action: { kind: 'read-version', version } };
    // Listed by model.versions but gone for model.get: read the model again (the loop is bounded).
    if (stored === null) return { action: { kind: 'read-model' } };
    if (stored.contentHash !== rendered.contentHash) return answer(verdicts.versionConflict(version, true));
  }
  if (app.suspend) {
    if (model?.deployedVersion) return { action: { kind: 'undeploy' } };
    return answer(verdicts.suspended(version));
  }
  if (!exists) return { action: put(app, rendered, prepared.body()) };
  if (model.deployedVersion !== version) return { action: { kind: 'deploy', version } };
  const prune = nextPrune(app, model, version, facts);
  if (prune) return { action: prune };
  // Whatever wadm says right after our own deploy predates it: no need to ask (on a cold start
  // with thousands of applications, one wadm request in four).
  if (facts.writes.some((w) => w.kind === 'deploy' && w.version === version)) return answer(verdicts.justDeployed(version));
  if (facts.status === undefined) return { action: { kind: 'read-status' } };
  return answer(verdicts.fromWadm(version, app.lattice, facts.status));
}

/** A model is ours when we wrote its newest version, or when the user asked us to adopt it. */
function owns(app: Settings, owner: string | null): boolean {
  return owner === app.owner || (owner === null && app.adopt);
}

function put(app: Settings, rendered: NonNullable<Derived['rendered']>, body: string): Write {
  return { kind: 'put', version: rendered.version, body, owner: app.owner, contentHash: rendered.contentHash };
}

/**
 * wadm never prunes: delete the oldest versions that are neither deployed nor desired. Nor the
 * newest: its owner annotation is what makes the model ours (see owns()).
 */
function nextPrune(app: Settings, model: ModelFacts, desired: string, facts: LatticeFacts): Write | undefined {
  if (facts.pruneBlocked || model.versions.length <= app.revisionHistoryLimit) return undefined;
  const keep = new Set([desired, model.deployedVersion, model.latest.version]);
  const oldest = model.versions.find((v) => !keep.has(v));
  return oldest === undefined ? undefined : { kind: 'delete', version: oldest };
}

export function respond(prepared: Prepared, verdict: Verdict, now: number, finalized?: boolean): HookResponse {
  const context = { generation: prepared.ref.generation, lattice: prepared.lattice, previous: prepared.previousStatus, now };
  const { status, resyncAfterSeconds } = buildStatus(context, verdict);
  const response: HookResponse = { status, children: [] };
  if (resyncAfterSeconds !== undefined) response.resyncAfterSeconds = resyncAfterSeconds;
  if (finalized !== undefined) response.finalized = finalized;
  return response;
}
