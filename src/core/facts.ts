// What one hook call has learned about the lattice so far, and the steps the core can ask the
// shell to take. The core decides the next step from these facts; the shell performs it and
// folds the result back in with `learn`. Facts are never mutated: each fold returns new facts.
import type { ModelFacts, UnavailableReason, VersionFacts, WadmStatus } from '../lattice/wire.js';

export interface StatusFacts {
  status: WadmStatus;
  /** wadm published it before our deploy of the current version was acknowledged. */
  predatesDeploy: boolean;
}

export interface LatticeFacts {
  /** undefined: not read yet; null: wadm has no such model. */
  model?: ModelFacts | null;
  /** Versions read one by one (to compare a pinned version's content). */
  inspected: Readonly<Record<string, VersionFacts | null>>;
  status?: StatusFacts;
  /** wadm refused a write: the message it gave. */
  rejected?: { step: Write['kind']; message: string };
  /** A prune delete failed; pruning waits for the next sync. */
  pruneBlocked?: boolean;
  unavailable?: { reason: UnavailableReason; message: string };
  /** Writes done in this call: bounds the loop and lets the status say what happened. */
  writes: Write[];
}

export const NO_FACTS: LatticeFacts = { inspected: {}, writes: [] };

export type Read = { kind: 'read-model' } | { kind: 'read-version'; version: string } | { kind: 'read-status' };
export type Write =
  | { kind: 'put'; version: string; body: string; owner: string; contentHash: string }
  | { kind: 'deploy'; version: string }
  | { kind: 'undeploy' }
  | { kind: 'delete'; version: string | null };
export type Action = Read | Write;

/** The result of an action, as the shell reports it. */
export type ActionResult =
  | { kind: 'model'; model: ModelFacts | null }
  | { kind: 'version'; version: string; facts: VersionFacts | null }
  | { kind: 'status'; status: StatusFacts }
  | { kind: 'done' }
  /** The write found the model other than we thought (version exists, app gone): read it again. */
  | { kind: 'stale' }
  | { kind: 'rejected'; message: string }
  | { kind: 'unavailable'; reason: UnavailableReason; message: string };

export function learn(facts: LatticeFacts, action: Action, result: ActionResult): LatticeFacts {
  const writes = isWrite(action) ? [...facts.writes, action] : facts.writes;
  switch (result.kind) {
    case 'model':
      return { ...facts, writes, model: result.model, inspected: {} };
    case 'version':
      return { ...facts, writes, inspected: { ...facts.inspected, [result.version]: result.facts } };
    case 'status':
      return { ...facts, writes, status: result.status };
    case 'stale':
      return { ...facts, writes, model: undefined, inspected: {} };
    case 'unavailable':
      return { ...facts, writes, unavailable: { reason: result.reason, message: result.message } };
    case 'rejected':
      // A failed prune is not worth failing the sync for: the next sync tries again.
      if (action.kind === 'delete' && action.version !== null) return { ...facts, writes, pruneBlocked: true };
      return { ...facts, writes, rejected: { step: action.kind as Write['kind'], message: result.message } };
    case 'done':
      return isWrite(action) ? { ...facts, writes, model: afterWrite(facts.model, action) } : facts;
  }
}

function isWrite(action: Action): action is Write {
  return !action.kind.startsWith('read-');
}

/** The model as our successful write left it, so the core needs no re-read. */
export function afterWrite(model: ModelFacts | null | undefined, write: Write): ModelFacts | null | undefined {
  switch (write.kind) {
    case 'put': {
      const latest: VersionFacts = { version: write.version, owner: write.owner, contentHash: write.contentHash };
      return model
        ? { ...model, versions: [...model.versions, write.version], latest }
        : { versions: [write.version], deployedVersion: null, latest };
    }
    case 'deploy':
      return model ? { ...model, deployedVersion: write.version } : model;
    case 'undeploy':
      return model ? { ...model, deployedVersion: null } : model;
    case 'delete':
      if (!model || write.version === null) return null;
      return {
        ...model,
        versions: model.versions.filter((v) => v !== write.version),
        deployedVersion: model.deployedVersion === write.version ? null : model.deployedVersion,
      };
  }
}
