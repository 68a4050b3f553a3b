// wadm 0.21 keeps every model of every lattice in one KV bucket: the model under `<lattice>-<name>`
// and each lattice's list of model names (its index) under `<lattice>` (server/storage.rs,
// model_key and model_set_key). Lattice and name may both contain `-`, so two different
// (lattice, name) pairs can share a key, and a model's key can be another lattice's index key.
// wadm does not notice: the second writer overwrites or corrupts the first. This module says
// which keys a model touches and, from what wadm answered about that key, whether writing it
// would collide. Pure: the core asks, the shell reads wadm.
import type { Action, KeyHolds, LatticeFacts, ModelFacts, UnavailableReason } from './facts.js';
import { strayNote } from './ownership.js';
import { verdict, type Verdict } from './reasons.js';

export interface ModelName {
  lattice: string;
  name: string;
}

/** Where wadm stores an application's model: its lattice and its name. */
export function modelNameOf(app: { lattice: string; ref: { name: string } }): ModelName {
  return { lattice: app.lattice, name: app.ref.name };
}

/** The KV key wadm stores a model under. */
export function modelKey(model: ModelName): string {
  return `${model.lattice}-${model.name}`;
}

/** The KV key wadm stores a lattice's list of model names under. */
function indexKey(lattice: string): string {
  return lattice;
}

/** The lattice whose index our model's key would be (whether or not that lattice exists). */
export function shadowedLattice(model: ModelName): string {
  return modelKey(model);
}

/** Every other (lattice, name) pair wadm would store under the same key as this model. */
export function keySharers(model: ModelName): ModelName[] {
  const key = modelKey(model);
  const sharers: ModelName[] = [];
  for (let at = key.indexOf('-'); at > 0; at = key.indexOf('-', at + 1)) {
    const lattice = key.slice(0, at);
    const name = key.slice(at + 1);
    if (lattice !== model.lattice && lattice !== '' && name !== '') sharers.push({ lattice, name });
  }
  return sharers;
}

/**
 * A (lattice, name) pair whose model key is this lattice's index key, so that reading that model
 * reads the index key: one small reply, whatever the lattice holds. Undefined when none exists
 * (a lattice without an inner `-`), and then no model can ever sit where the index goes.
 */
export function indexReader(lattice: string): ModelName | undefined {
  for (let at = lattice.indexOf('-'); at > 0; at = lattice.indexOf('-', at + 1)) {
    if (at < lattice.length - 1) return { lattice: lattice.slice(0, at), name: lattice.slice(at + 1) };
  }
  return undefined;
}

/**
 * What wadm's storage error reading our own key shows: an action to learn more, that the key holds
 * another lattice's index, or nothing (an outage to retry, with what could not be checked).
 */
export type UnreadableKey = { action: Action } | { holds: 'index' } | { unknown: { reason: UnavailableReason; message: string } };

/**
 * wadm answers `Internal storage error` alike when its store fails (a JetStream leader election, a
 * NATS failover) and when the key holds what it cannot read as a model (handlers.rs): that reply,
 * another lattice answering, or a read that works a moment later show nothing about the key. Our
 * key is the index key of lattice `<lattice>-<name>`, whose list wadm reads from that key: only
 * applications listed there show that it holds that lattice's index, where nothing of ours can be.
 * Undefined when the facts hold no storage error of our own key.
 */
export function unreadableKey(model: ModelName, facts: LatticeFacts): UnreadableKey | undefined {
  const cause = facts.unavailable;
  // A summary is read from our key too where the lattice cannot be listed (its versions).
  if (cause?.reason !== 'StorageError' || (cause.during !== 'read-model' && cause.during !== 'read-summary')) return undefined;
  const key = modelKey(model);
  const listed = facts.keyListed;
  if (listed === undefined) return { action: { kind: 'read-list', of: shadowedLattice(model) } };
  if (listed === true) return { holds: 'index' };
  const read = `wadm answered "${cause.message}" reading the key "${key}" of application "${model.name}" (its store failing, or the key holding something other than an application)`;
  const why =
    listed === false
      ? `lattice "${key}" lists no applications, so nothing shows that the key is its list; if this lasts while wadm answers other lattices, the key may hold that lattice's emptied list: rename this resource, or use a spec.lattice without "-"`
      : `whether the key is lattice "${key}"'s list of applications could not be checked (${listed.reason}: ${listed.message})`;
  return { unknown: { reason: cause.reason, message: `${read}; ${why}` } };
}

/** What wadm answered about the keys a model we are about to write touches. */
export interface KeyEvidence {
  /**
   * `metadata.name` of the model wadm returned for our lattice and name: undefined when it
   * returned none, null when the key was shown to hold the index of the lattice named like it
   * (unreadableKey).
   */
  storedName?: string | null;
  /** What our own lattice's index key holds: a model there is another lattice's. */
  ownIndex?: KeyHolds;
  /** The policy grants that lattice by its literal name, so it may appear at any time. */
  shadowedByPolicy?: boolean;
}

export type Collision =
  { kind: 'model'; key: string } | { kind: 'index'; key: string; lattice: string; existing: boolean } | { kind: 'own-index'; key: string };

/** Whether writing this model would collide, on what wadm answered; undefined when it would not. */
export function collision(model: ModelName, evidence: KeyEvidence): Collision | undefined {
  const key = modelKey(model);
  // A model stored under our key with another name belongs to another lattice: no lattice-and-
  // name pair other than ours maps to this key with our own name.
  if (typeof evidence.storedName === 'string' && evidence.storedName !== model.name) return { kind: 'model', key };
  const lattice = shadowedLattice(model);
  if (evidence.storedName === null) return { kind: 'index', key, lattice, existing: true };
  // wadm stores the model first and its name in the index second: a broken index half-writes.
  if (evidence.ownIndex === 'model') return { kind: 'own-index', key: indexKey(model.lattice) };
  if (evidence.shadowedByPolicy) return { kind: 'index', key, lattice, existing: false };
  return undefined;
}

/**
 * Whether the model wadm returned under our key is another lattice's: its oldest version names
 * the application the key holds. wadm adds a put to whatever the key holds, so a first put of
 * another lattice that raced ours left a version of its name in our model (ownership.ts
 * strayVersion), and ours in its. Undefined while the oldest version is unread (ownership reads it).
 */
export function squatter(name: ModelName, model: ModelFacts): Collision | undefined {
  const oldest = model.versions[0];
  const known = oldest !== undefined && Object.hasOwn(model.known, oldest) ? model.known[oldest]!.name : undefined;
  // The newest manifest's name, which each model read returns, is the oldest's when it is the only one.
  const storedName = known ?? (model.versions.length === 1 ? model.storedName : undefined);
  return storedName === undefined ? undefined : collision(name, { storedName });
}

/** Why writing this model was refused: wadm's key scheme, and what to rename. Names no other resource. */
export function nameCollision(
  app: { ref: { name: string }; lattice: string },
  found: Collision,
  version: string | undefined,
  stray?: string,
): Verdict {
  const where =
    found.kind === 'own-index'
      ? `wadm keeps the list of applications of lattice "${app.lattice}" under the key "${found.key}"`
      : `wadm would store application "${app.ref.name}" of lattice "${app.lattice}" under the key "${found.key}"`;
  const what = collisionText(found);
  const why = 'wadm keys every application by "<lattice>-<name>", so names with "-" can collide across lattices';
  const rename = 'rename this resource, or use a spec.lattice without "-"';
  // A put that raced that application's first one left a version of ours in it (ownership.ts).
  const fix = stray === undefined ? `nothing was written: ${rename}` : `${rename}; ${strayNote(stray)}`;
  return verdict('NameCollision', `${where}, ${what} (${why}); ${fix}`, version === undefined ? {} : { version });
}

function collisionText(found: Collision): string {
  switch (found.kind) {
    case 'model':
      return 'which already holds an application of another lattice';
    case 'own-index':
      return 'which holds an application of another lattice instead, so wadm could store the model but not list it';
    case 'index': {
      const whose = found.existing ? '' : 'reserved by the lattice policy for ';
      return `which is ${whose}the list of applications of lattice "${found.lattice}"; writing it would break every application of that lattice`;
    }
  }
}
