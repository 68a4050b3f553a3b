// wadm keeps every version of a model in one KV value (`{"manifests":{…},"deployed_version":…}`),
// and NATS refuses a value larger than its max_payload: wadm then never answers the put. So before
// a put we add up what wadm would store, and make room by deleting the oldest versions that are
// neither deployed nor needed to prove ownership; when even those and the new version cannot fit,
// nothing is put. Pure, like the rest of the core.
import type { ModelFacts } from './facts.js';
import { newestOwned, prunable } from './ownership.js';

/** The room decision before a put: fine, learn a size first, delete a version first, or never. */
export type Room = { fits: true } | { read: string } | { prune: string } | { tooLarge: { bytes: number; limit: number } };

/** What this application's put adds: its version, its body's size, and whose versions prove ownership. */
export interface Newcomer {
  version: string;
  bytes: number;
  owner: string;
  revisionHistoryLimit: number;
}

/**
 * The KV value may not reach max_payload; wadm re-serialises what it stores, so our estimate of a
 * version is its manifest as we sent or read it, and the room left for that difference and for
 * the KV message's headers is 1/64 of max_payload plus 2 KiB (16 KiB + 2 KiB under NATS's 1 MiB).
 */
export function modelBudget(maxPayloadBytes: number): number {
  return maxPayloadBytes - Math.ceil(maxPayloadBytes / 64) - 2048;
}

/** wadm's stored value of a model: each version under its name, and the deployed one. */
export function storedBytes(versions: { version: string; bytes: number }[], deployed: string | null): number {
  const envelope = '{"manifests":{},"deployed_version":null}'.length + (deployed === null ? 0 : deployed.length - 2);
  return versions.reduce((sum, v, i) => sum + v.bytes + v.version.length + (i === 0 ? 3 : 4), envelope);
}

/** A version's size if this call knows it: read with its annotations, put by us, or remembered. */
function sizeOf(model: ModelFacts, version: string): number | undefined {
  return (
    (Object.hasOwn(model.known, version) ? model.known[version]!.bytes : undefined) ??
    (model.sizes && Object.hasOwn(model.sizes, version) ? model.sizes[version] : undefined)
  );
}

export function roomForPut(model: ModelFacts | null, put: Newcomer, maxPayloadBytes: number | undefined): Room {
  // A first version alone was checked against max_payload with the spec (ManifestTooLarge).
  if (model === null || maxPayloadBytes === undefined) return { fits: true };
  const keep = kept(model, put.owner);
  const candidates = model.versions.filter((v) => !keep.has(v));
  // Past revisionHistoryLimit already (versions put outside Kubernetes): thin out before reading sizes.
  if (model.versions.length > put.revisionHistoryLimit && candidates.length > 0) {
    const pruning = prunable(model, put.owner, candidates);
    if ('read' in pruning) return pruning;
    if (pruning.length > 0) return { prune: pruning[0]! };
  }
  const unknown = model.versions.find((v) => sizeOf(model, v) === undefined);
  if (unknown !== undefined) return { read: unknown };
  const limit = modelBudget(maxPayloadBytes);
  const entry = (version: string) => ({ version, bytes: sizeOf(model, version)! });
  const newcomer = { version: put.version, bytes: put.bytes };
  const all = storedBytes([...model.versions.map(entry), newcomer], model.deployedVersion);
  if (all <= limit) return { fits: true };
  const pruning = prunable(model, put.owner, candidates);
  if ('read' in pruning) return pruning;
  const least = storedBytes([...model.versions.filter((v) => !pruning.includes(v)).map(entry), newcomer], model.deployedVersion);
  if (least > limit) return { tooLarge: { bytes: least, limit } };
  return { prune: pruning[0]! };
}

/**
 * Never deleted to make room: the deployed version (deleting it undeploys the application), and,
 * unless the deployed version is ours, our newest, whose owner annotation keeps the model ours
 * should the put then fail.
 */
function kept(model: ModelFacts, owner: string): Set<string> {
  const keep = new Set<string>();
  const deployed = model.deployedVersion;
  if (deployed !== null) keep.add(deployed);
  const deployedOurs = deployed !== null && Object.hasOwn(model.known, deployed) && model.known[deployed]!.owner === owner;
  if (!deployedOurs) {
    const newest = newestOwned(model, owner);
    if (newest !== undefined) keep.add(newest);
  }
  return keep;
}

/**
 * The sizes worth remembering of a model: every listed version's but the newest's (which each model
 * read returns), so that a replica's next edit need not read each kept version again; or none.
 */
export function olderSizes(model: ModelFacts): Readonly<Record<string, number>> | undefined {
  let sizes: Record<string, number> | undefined;
  for (const version of model.versions.slice(0, -1)) {
    const bytes = sizeOf(model, version);
    // Without a prototype: a version may be named `__proto__`.
    if (bytes !== undefined) (sizes ??= Object.create(null) as Record<string, number>)[version] = bytes;
  }
  return sizes;
}
