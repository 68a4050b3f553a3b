import type { HostsView } from './lattice-hosts.js';

// What one hook call knows of wadm, and the steps the core can ask the shell to take. The core
// decides the next step from these facts; the shell performs it and folds the result back in with
// `learn`. Facts are never mutated: each fold returns new facts.

/**
 * Why wadm could not be asked: the hook reports it as Ready=Unknown and retries; NotPermitted (the
 * service's NATS user may not use the subject) is the platform's to grant, reported as Stalled.
 */
export type UnavailableReason = 'Disconnected' | 'NoResponders' | 'Timeout' | 'StorageError' | 'BadReply' | 'NotPermitted';

/** What we know of one version of a model: who put it and what it contains. */
export interface VersionFacts {
  version: string;
  /** Our owner annotation (`<namespace>/<name>` of a resource), null when absent. */
  owner: string | null;
  contentHash: string | null;
  /** Bytes of the manifest as wadm stores it (read back, or the body we put): the model's KV value holds every version. */
  bytes?: number;
  /**
   * `metadata.name` of this version's manifest, when read: under a key two lattices share, a put
   * that raced another adds a version of another name to the model (collisions.ts).
   */
  name?: string;
}

/** What `model.versions` and `model.get` tell us about a model. */
export interface ModelFacts {
  /** Oldest first, as wadm keeps them. */
  versions: string[];
  deployedVersion: string | null;
  /** Versions whose annotations were read: always the newest, more when ownership needs them. */
  known: Readonly<Record<string, VersionFacts>>;
  /**
   * Taken from memory rather than asked during this call. Enough to answer, never to write: a
   * `wash app put` changes a model without any event that would have refreshed the memory.
   */
  remembered?: boolean;
  /** `metadata.name` of the newest manifest wadm returned: another name means another lattice's model shares our key. */
  storedName?: string;
  /**
   * Sizes of versions not read in this call but known to this replica (a version's content never
   * changes while it exists): enough to budget the model's stored size, never to judge ownership.
   */
  sizes?: Readonly<Record<string, number>>;
}

/** wadm's status of an application (the fields we read). */
export interface LatticeStatus {
  status: { type: string; message?: string };
  scalers?: { kind?: string; name?: string; status: { type: string; message?: string } }[];
}

export interface StatusFacts {
  status: LatticeStatus;
  /** wadm published it before this replica's own deploy of the current version was acknowledged. */
  predatesDeploy: boolean;
  /** This replica heard wadm publish it after its own acknowledged deploy: evidence needing no clock. */
  followsOwnDeploy?: boolean;
  /** The version whose deploy this replica heard wadm announce before it heard this status: evidence needing no clock. */
  followsDeployOf?: string;
  /**
   * The version of the latest deploy this replica saw after it knew this status (its own,
   * acknowledged, or one wadm announced): wadm published the status before that deploy, so it
   * speaks of what ran before it, whatever the clocks say.
   */
  precedesDeployOf?: string;
  /** When this replica heard wadm publish it (its status stream), on the shell's clock; absent for a status read. */
  heardAt?: number;
}

/**
 * What wadm says of a model in a summary: the lattice's list of applications (one read shared by
 * every application of the lattice), or, where the lattice cannot be listed, the model's versions.
 */
export interface ModelSummary {
  /** The newest version. */
  version: string;
  /** The deployed version, null when none is. */
  deployed: string | null;
}

export interface LatticeFacts {
  /** undefined: not read yet; null: wadm has no such model. */
  model?: ModelFacts | null;
  /**
   * undefined: not asked; null: no summary to go by (the model is read instead: summary.ts).
   */
  summary?: ModelSummary | null;
  status?: StatusFacts;
  /** wadm refused a write: the message it gave. */
  rejected?: { step: Write['kind']; message: string };
  /** A prune delete failed; pruning waits for the next sync. */
  pruneBlocked?: boolean;
  /** `during`: the action that failed. */
  unavailable?: { reason: UnavailableReason; message: string; during: Action['kind'] };
  /**
   * Whether lattice `<lattice>-<name>` lists any application, asked because wadm could not read our
   * own key, which is that lattice's index key (collisions.ts): true shows that the key holds its
   * index; false shows nothing (an emptied index and no index list alike); or why it was not read.
   */
  keyListed?: boolean | { reason: UnavailableReason; message: string };
  /** What wadm keys hold, by key, as read through a model name that maps to them (see collisions.ts). */
  keys?: Readonly<Record<string, KeyHolds>>;
  /** What this call learnt of the lattices the application was in before spec.lattice changed. */
  former?: Readonly<Record<string, LatticeFacts>>;
  /**
   * The call reached its bound of wadm requests (steps.ts) with the core still asking, last for
   * `lattice` (a former one; absent, its own): the core answers LatticeUnavailable at once.
   */
  exhausted?: { requests: number; lattice?: string };
  /**
   * Our put reached a model that others wrote since we read it: wadm counted other versions than
   * the ones we knew (a first put that raced another's). The model is read afresh before anything
   * else (ownership.ts says whose it is).
   */
  raced?: true;
  /**
   * The lattice's hosts as their heartbeats told them, read to explain a failed placement
   * (placement.ts); null when the service does not listen to them (no WasmCloudLattice names it).
   */
  hosts?: HostsView | null;
  /** Writes wadm confirmed in this call. */
  writes: Write[];
  /** When wadm acknowledged this call's deploy, on the shell's clock. */
  deployedAt?: number;
  /** Writes wadm refused or never answered, with why: logged, never counted as done. */
  failed: { write: Write; reason: string }[];
}

export const NO_FACTS: LatticeFacts = { writes: [], failed: [] };

/**
 * What a wadm KV key holds: nothing, a model, or what wadm cannot read as a model (wadm writes
 * nothing else to its bucket than models and lattice indexes, so: an index).
 */
export type KeyHolds = 'nothing' | 'model' | 'index';

/**
 * `lattice`: set on the actions for a lattice the application was in before spec.lattice changed;
 * absent, the action is for the application's own lattice.
 */
interface Target {
  lattice?: string;
}

/**
 * `fresh`: from wadm, not from memory (before a write). `deployed`: the version the resource's last
 * answer found deployed, when not the desired one: an edit needs its facts (its deploy replaces
 * it), and after a settled version it is the newest too. A shell that does not know what it holds
 * may read it alongside the model's versions (at once instead of one after the other).
 */
export type Read = Target &
  (
    | { kind: 'read-model'; fresh?: true; deployed?: string }
    | { kind: 'read-version'; version: string }
    | { kind: 'read-status' }
    /** The model's summary and, when the lattice's list gave it, its status (summary.ts). */
    | { kind: 'read-summary' }
    /** What the key of (lattice, name) holds, read through that pair: one small reply whatever the lattices hold. */
    | { kind: 'read-key'; key: { lattice: string; name: string } }
    /**
     * Whether lattice `of` lists any application (wadm's model.get without a name): `of` is our own
     * key, so a list there shows that the key holds that lattice's index (collisions.ts).
     */
    | { kind: 'read-list'; of: string }
    /** The lattice's hosts as their heartbeats told them: no wadm request, and no subscription of its own. */
    | { kind: 'read-hosts' }
  );
export type Write = Target &
  /** `name`: the manifest's metadata.name, which a squatting model's versions differ in (collisions.ts). */
  (
    | { kind: 'put'; version: string; body: string; owner: string; contentHash: string; bytes: number; name: string }
    /**
     * `replacing`: what wadm had deployed instead, when it was not ours (drift being healed).
     * `adopting`: the unowned version deployed outside Kubernetes that an adopting resource takes
     * over (not drift: the resource asked for it).
     * `moving`: the lattice the application was in before its spec.lattice changed (a move, not drift).
     */
    | { kind: 'deploy'; version: string; replacing?: Drift; adopting?: string; moving?: string }
    | { kind: 'undeploy' }
    | { kind: 'delete'; version: string | null }
  );
export type Action = Read | Write;

/** What wadm had deployed (null: nothing) because of a change outside Kubernetes that our deploy undoes. */
export type Drift = { deployed: string | null };

/** The result of an action, as the shell reports it. */
export type ActionResult =
  | { kind: 'model'; model: ModelFacts | null }
  | { kind: 'version'; version: string; facts: VersionFacts | null }
  | { kind: 'status'; status: StatusFacts }
  | { kind: 'summary'; summary: ModelSummary | null }
  | { kind: 'key'; key: string; holds: KeyHolds }
  | { kind: 'listed'; any: boolean }
  | { kind: 'hosts'; hosts: HostsView | null }
  /**
   * `at`: when wadm acknowledged it, on the shell's clock (deploys: the anchor of status.deployedAt).
   * `versions`: how many versions a put left in the model, as wadm counted them.
   */
  | { kind: 'done'; at?: number; versions?: number }
  /** The write found the model other than we thought (version exists, app gone): read it again. */
  | { kind: 'stale' }
  | { kind: 'rejected'; message: string }
  | { kind: 'unavailable'; reason: UnavailableReason; message: string };

export function isWrite(action: Action): action is Write {
  return !action.kind.startsWith('read-');
}

export function learn(facts: LatticeFacts, action: Action, result: ActionResult): LatticeFacts {
  if (action.lattice !== undefined) return learnFormer(facts, action as Action & { lattice: string }, result);
  switch (result.kind) {
    case 'model':
      return { ...facts, model: result.model };
    case 'version':
      return { ...facts, model: withVersion(facts.model, result.version, result.facts) };
    case 'status':
      return { ...facts, status: result.status };
    case 'summary':
      return { ...facts, summary: result.summary };
    case 'key':
      return { ...facts, keys: { ...facts.keys, [result.key]: result.holds } };
    case 'listed':
      return { ...facts, keyListed: result.any };
    case 'hosts':
      return { ...facts, hosts: result.hosts };
    case 'stale':
      // A put that finds its version there met a model others wrote since we read it.
      return action.kind === 'put' ? { ...facts, model: undefined, raced: true } : { ...facts, model: undefined };
    case 'unavailable': {
      // The list read only looks for evidence: the storage error before it stays the cause.
      if (action.kind === 'read-list') return { ...facts, keyListed: { reason: result.reason, message: result.message } };
      const failed = isWrite(action) ? [...facts.failed, { write: action, reason: `${result.reason}: ${result.message}` }] : facts.failed;
      return { ...facts, failed, unavailable: { reason: result.reason, message: result.message, during: action.kind } };
    }
    case 'rejected': {
      const write = action as Write;
      const failed = [...facts.failed, { write, reason: result.message }];
      // A failed prune is not worth failing the sync for: the next sync tries again.
      if (write.kind === 'delete' && write.version !== null) return { ...facts, failed, pruneBlocked: true };
      return { ...facts, failed, rejected: { step: write.kind, message: result.message } };
    }
    case 'done': {
      if (!isWrite(action)) return facts;
      // wadm adds a put to whatever the key holds by then: another count means others' versions
      // are in the model, so nothing is assumed of it but that our put happened.
      const known = facts.model?.versions.length ?? 0;
      if (action.kind === 'put' && result.versions !== undefined && result.versions !== known + 1) {
        return { ...facts, writes: [...facts.writes, action], model: undefined, raced: true };
      }
      const learnt = { ...facts, writes: [...facts.writes, action], model: afterWrite(facts.model, action) };
      return action.kind === 'deploy' && result.at !== undefined ? { ...learnt, deployedAt: result.at } : learnt;
    }
  }
}

/**
 * A former lattice's facts are its own; its writes, confirmed or failed, are also the call's, so
 * that they are logged and counted, and so that an answer after them is not kept as settled.
 */
function learnFormer(facts: LatticeFacts, action: Action & { lattice: string }, result: ActionResult): LatticeFacts {
  const { lattice: _lattice, ...own } = action;
  const before = facts.former?.[action.lattice] ?? NO_FACTS;
  const after = learn(before, own as Action, result);
  const writes = after.writes.length > before.writes.length ? [...facts.writes, action as Write] : facts.writes;
  const failed =
    after.failed.length > before.failed.length ? [...facts.failed, { ...after.failed.at(-1)!, write: action as Write }] : facts.failed;
  return { ...facts, writes, failed, former: { ...facts.former, [action.lattice]: after } };
}

/** A version read one by one; null (gone since model.versions listed it) means: read the model again. */
function withVersion(model: ModelFacts | null | undefined, version: string, facts: VersionFacts | null): ModelFacts | null | undefined {
  if (!model || facts === null) return undefined;
  return { ...model, known: { ...model.known, [version]: facts } };
}

/** The model as our confirmed write left it, so the core needs no re-read. */
function afterWrite(model: ModelFacts | null | undefined, write: Write): ModelFacts | null | undefined {
  switch (write.kind) {
    case 'put': {
      const { version, owner, contentHash, bytes, name } = write;
      const facts: VersionFacts = { version, owner, contentHash, bytes, name };
      const known = { ...model?.known, [version]: facts };
      return model ? { ...model, versions: [...model.versions, version], known } : { versions: [version], deployedVersion: null, known };
    }
    case 'deploy':
      return model ? { ...model, deployedVersion: write.version } : model;
    case 'undeploy':
      return model ? { ...model, deployedVersion: null } : model;
    case 'delete': {
      if (!model || write.version === null) return null;
      const { [write.version]: _gone, ...known } = model.known;
      const versions = model.versions.filter((v) => v !== write.version);
      if (versions.length === 0) return null;
      return { ...model, versions, known, deployedVersion: model.deployedVersion === write.version ? null : model.deployedVersion };
    }
  }
}
