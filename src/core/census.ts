// What a lattice's list of applications (wadm's `model.get` without a name) says of the models a
// replica remembers. wadm's store can be lost whole (its JetStream streams and KV buckets deleted,
// a NATS server replaced) and wadm then starts again on an empty store, announcing nothing: the
// list is the one read, per lattice, that shows it. A remembered model the list does not name, or
// names with another newest or deployed version, must be read again before anything is answered
// from it.
import type { LatticeStatus, ModelFacts } from './facts.js';

/** One model as wadm's list summarises it. */
export interface ListedModel {
  name: string;
  /** The newest version. */
  version: string;
  /** The deployed version, null when none is. */
  deployed: string | null;
  /** wadm's status of it; absent when wadm has none (or none we could read). */
  status?: LatticeStatus;
}

/** The remembered models (by name) that the list contradicts, sorted by name. */
export function contradicted(
  remembered: Iterable<readonly [string, Pick<ModelFacts, 'versions' | 'deployedVersion'>]>,
  listed: readonly ListedModel[],
): string[] {
  const byName = new Map(listed.map((model) => [model.name, model]));
  const stale: string[] = [];
  for (const [name, facts] of remembered) {
    const now = byName.get(name);
    if (now === undefined || now.version !== facts.versions[facts.versions.length - 1] || now.deployed !== facts.deployedVersion)
      stale.push(name);
  }
  return stale.sort();
}
