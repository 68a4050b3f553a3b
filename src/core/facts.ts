// What one hook call knows of wadm, and the steps the core can ask the shell to take. The core
// decides the next step from these facts; the shell performs it and folds the result back in with
// `learn`. Facts are never mutated: each fold returns new facts.

/** Why wadm could not be asked: the hook reports it as Ready=Unknown and retries. */
export type UnavailableReason = 'Disconnected' | 'NoResponders' | 'Timeout' | 'StorageError' | 'BadReply';

/** What we know of one version of a model: who put it and what it contains. */
export interface VersionFacts {
  version: string;
  /** Our owner annotation (`<namespace>/<name>` of a resource), null when absent. */
  owner: string | null;
  contentHash: string | null;
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
}

/** wadm's status of an application (the fields we read). */
export interface LatticeStatus {
  status: { type: string; message?: string };
  scalers?: { kind?: string; name?: string; status: { type: string; message?: string } }[];
}

export interface StatusFacts {
  status: LatticeStatus;
  /** wadm published it before our deploy of the current version was acknowledged. */
  predatesDeploy: boolean;
}

export interface LatticeFacts {
  /** undefined: not read yet; null: wadm has no such model. */
  model?: ModelFacts | null;
  status?: StatusFacts;
  /** wadm refused a write: the message it gave. */
  rejected?: { step: Write['kind']; message: string };
  /** A prune delete failed; pruning waits for the next sync. */
  pruneBlocked?: boolean;
  /** `during`: the action that failed; `isolated`: wadm answers other lattices meanwhile. */
  unavailable?: { reason: UnavailableReason; message: string; during: Action['kind']; isolated?: boolean };
  /** How many applications a lattice lists, by lattice; null: wadm cannot parse its index (see collisions.ts). */
  indexes?: Readonly<Record<string, number | null>>;
  /** Writes wadm confirmed in this call. */
  writes: Write[];
  /** Writes wadm refused or never answered, with why: logged, never counted as done. */
  failed: { write: Write; reason: string }[];
}

export const NO_FACTS: LatticeFacts = { writes: [], failed: [] };

/** `fresh`: from wadm, not from memory (before a write). */
export type Read =
  | { kind: 'read-model'; fresh?: true }
  | { kind: 'read-version'; version: string }
  | { kind: 'read-status' }
  /** The models another lattice lists (model.get without a name): is its index where our model would go? */
  | { kind: 'read-index'; lattice: string };
export type Write =
  | { kind: 'put'; version: string; body: string; owner: string; contentHash: string }
  /** `replacing`: what wadm had deployed instead, when it was not ours (drift being healed). */
  | { kind: 'deploy'; version: string; replacing?: Drift }
  | { kind: 'undeploy' }
  | { kind: 'delete'; version: string | null };
export type Action = Read | Write;

/** What wadm had deployed (null: nothing) because of a change outside Kubernetes that our deploy undoes. */
export type Drift = { deployed: string | null };

/** The result of an action, as the shell reports it. */
export type ActionResult =
  | { kind: 'model'; model: ModelFacts | null }
  | { kind: 'version'; version: string; facts: VersionFacts | null }
  | { kind: 'status'; status: StatusFacts }
  /** models null: wadm answered a storage error for this key alone (its index holds something else). */
  | { kind: 'index'; lattice: string; models: number | null }
  | { kind: 'done' }
  /** The write found the model other than we thought (version exists, app gone): read it again. */
  | { kind: 'stale' }
  | { kind: 'rejected'; message: string }
  /** `isolated`: other lattices' wadm answered meanwhile (a storage error of this lattice only). */
  | { kind: 'unavailable'; reason: UnavailableReason; message: string; isolated?: boolean };

export function isWrite(action: Action): action is Write {
  return !action.kind.startsWith('read-');
}

export function learn(facts: LatticeFacts, action: Action, result: ActionResult): LatticeFacts {
  switch (result.kind) {
    case 'model':
      return { ...facts, model: result.model };
    case 'version':
      return { ...facts, model: withVersion(facts.model, result.version, result.facts) };
    case 'status':
      return { ...facts, status: result.status };
    case 'index':
      return { ...facts, indexes: { ...facts.indexes, [result.lattice]: result.models } };
    case 'stale':
      return { ...facts, model: undefined };
    case 'unavailable': {
      const failed = isWrite(action) ? [...facts.failed, { write: action, reason: `${result.reason}: ${result.message}` }] : facts.failed;
      const unavailable = { reason: result.reason, message: result.message, during: action.kind };
      return { ...facts, failed, unavailable: result.isolated ? { ...unavailable, isolated: true } : unavailable };
    }
    case 'rejected': {
      const write = action as Write;
      const failed = [...facts.failed, { write, reason: result.message }];
      // A failed prune is not worth failing the sync for: the next sync tries again.
      if (write.kind === 'delete' && write.version !== null) return { ...facts, failed, pruneBlocked: true };
      return { ...facts, failed, rejected: { step: write.kind, message: result.message } };
    }
    case 'done':
      if (!isWrite(action)) return facts;
      return { ...facts, writes: [...facts.writes, action], model: afterWrite(facts.model, action) };
  }
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
      const facts: VersionFacts = { version: write.version, owner: write.owner, contentHash: write.contentHash };
      const known = { ...model?.known, [write.version]: facts };
      return model ? { ...model, versions: [...model.versions, write.version], known } : { versions: [write.version], deployedVersion: null, known };
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
