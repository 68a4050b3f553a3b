// Whose a wadm model is. Ownership is history: a model is the resource's whose owner annotation
// its oldest version carries, so every replica, whenever it started, reaches the same answer from
// what wadm holds. The oldest, not any: two first puts that meet an empty key at the same moment
// both pass the check that it is free, and wadm adds the second to the model the first created
// (server/handlers.rs put_model), so a later version of another owner is such a stray and never
// makes the model its owner's; its owner removes it (strayVersion). A model whose oldest version
// names no owner (put outside Kubernetes) becomes a resource's only by adoption, in its own
// lattice, and is then its when any version carries its owner annotation.
import type { Application } from './application.js';
import type { ModelFacts, VersionFacts } from './facts.js';
import type { Verdict } from './reasons.js';

/** Versions read to find our owner annotation before a model is called foreign. */
const MAX_OWNERSHIP_READS = 12;

export type Ownership = { is: 'ours' } | { is: 'foreign'; owners: (string | null)[] } | { read: string };

/**
 * The oldest version is read first; when it names no owner, versions are read most telling first:
 * the deployed one, the desired one, then newest to oldest (the newest came with the model).
 * `adopting`: the resource may take over a model no version of which names an owner.
 */
export function ownership(app: Application, model: ModelFacts, desired: string | undefined, adopting: boolean): Ownership {
  const oldest = model.versions[0];
  if (oldest !== undefined && !Object.hasOwn(model.known, oldest)) return { read: oldest };
  const first = oldest === undefined ? null : model.known[oldest]!.owner;
  if (first !== null) return first === app.owner ? { is: 'ours' } : { is: 'foreign', owners: [first] };
  const known = Object.values(model.known);
  if (known.some((v) => v.owner === app.owner)) return { is: 'ours' };
  const candidates = [model.deployedVersion, desired, ...[...model.versions].reverse()];
  const unread = candidates.find((v): v is string => v != null && model.versions.includes(v) && !Object.hasOwn(model.known, v));
  if (unread !== undefined && known.length < MAX_OWNERSHIP_READS) return { read: unread };
  const adoptable = adopting && known.every((v) => v.owner === null);
  return adoptable ? { is: 'ours' } : { is: 'foreign', owners: known.map((v) => v.owner) };
}

/** Whether the resource may adopt an unowned model in its own lattice. */
export function adopts(app: Application): boolean {
  return app.valid && app.adopt;
}

/** The newest version carrying this owner annotation among those read, if any. */
export function newestOwned(model: ModelFacts, owner: string): string | undefined {
  return [...model.versions].reverse().find((v) => Object.hasOwn(model.known, v) && model.known[v]!.owner === owner);
}

/**
 * A version read in our model that another resource's racing first put left there: it carries
 * another owner annotation, or another name (a lattice sharing our key: collisions.ts; wadm stores
 * the model under the newest version's name, so while that version is the newest, our deploys
 * miss the key). Removed before any other write, by the model's owner only: the loser of the race
 * never writes into a model it does not own, and two deletes of one version would make wadm
 * announce the application undeployed (delete_model answers the second `noop` and says so).
 * A deployed one stays: deploying ours replaces it (drift), then it goes.
 */
export function strayVersion(app: Application, model: ModelFacts): { delete: string } | { read: string } | undefined {
  // Each model read tells the newest; after deleting the newest stray, the next newest is read.
  const newest = model.versions.at(-1);
  if (newest !== undefined && !Object.hasOwn(model.known, newest)) return { read: newest };
  const stray = model.versions.slice(1).find((v) => {
    if (v === model.deployedVersion || !Object.hasOwn(model.known, v)) return false;
    return foreign(model.known[v]!, app);
  });
  return stray === undefined ? undefined : { delete: stray };
}

/**
 * A version of ours in a model that is not ours: a put of ours that met another's first put at the
 * same moment. Read from what wadm holds, so every replica says the same; it is not removed here
 * (strayVersion says who does).
 */
export function ourStray(app: Application, model: ModelFacts): string | undefined {
  return model.versions.find((v) => Object.hasOwn(model.known, v) && model.known[v]!.owner === app.owner);
}

/** What a refusal adds about our stray version; names nothing of the application holding it. */
export function strayNote(stray: string): string {
  return `wadm also holds version "${stray}" of this resource in it, put at the same moment as that application's first version: it is never deployed, and a resource owning that application deletes it when it next syncs`;
}

/** An ownership conflict, saying so when the model holds our stray version. */
export function withOurStray(app: Application, model: ModelFacts, refused: Verdict): Verdict {
  const stray = ourStray(app, model);
  return stray === undefined ? refused : { ...refused, message: `${refused.message}; ${strayNote(stray)}` };
}

function foreign(version: VersionFacts, app: Application): boolean {
  return (version.owner !== null && version.owner !== app.owner) || (version.name !== undefined && version.name !== app.ref.name);
}

/**
 * Of the versions a prune could delete (oldest first), those it may; or one to read first. The
 * oldest version says whose the model is: ours is deleted only once the next is known to carry
 * our owner too, else a stray in the middle, never read, would become the oldest.
 */
export function prunable(model: ModelFacts, owner: string, candidates: string[]): string[] | { read: string } {
  const [oldest, next] = model.versions;
  if (oldest === undefined || next === undefined || candidates[0] !== oldest) return candidates;
  if (!Object.hasOwn(model.known, oldest) || model.known[oldest]!.owner !== owner) return candidates;
  if (!Object.hasOwn(model.known, next)) return { read: next };
  return model.known[next]!.owner === owner ? candidates : candidates.slice(1);
}
