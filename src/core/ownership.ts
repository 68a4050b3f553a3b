// Whose a wadm model is. Ownership is history: a model is a resource's when any version carries
// its owner annotation, so every replica, whenever it started, reaches the same answer from what
// wadm holds; an unowned model becomes a resource's only by adoption, in its own lattice.
import type { Application } from './application.js';
import type { ModelFacts } from './facts.js';

/** Versions read to find our owner annotation before a model is called foreign. */
const MAX_OWNERSHIP_READS = 12;

export type Ownership = { is: 'ours' } | { is: 'foreign'; owners: (string | null)[] } | { read: string };

/**
 * Versions are read most telling first: the deployed one, the desired one, then newest to oldest
 * (the newest came with the model). `adopting`: the resource may take over a model no version of
 * which names an owner.
 */
export function ownership(app: Application, model: ModelFacts, desired: string | undefined, adopting: boolean): Ownership {
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
