// The first sync of a settled application after a restart, without reading its model. A fresh
// replica remembers nothing, and reading an application's model and status costs wadm three
// requests (versions, get, status): for 10,000 applications, 30,000 on a wadm that answers one at
// a time. What the lattice's list says of each model (one read for every application of the
// lattice: its newest and deployed version and its status) answers most of them, given what the
// resource's own status attests: a replica found the model ours and this version deployed.
//
// Why the two together are enough to answer, never to write (a write always reads the model):
//   - the version is a hash of the manifest, which carries the resource's name and owner
//     annotation (manifest.ts): wadm holding that version as its newest holds our content, as
//     every call that finds the version in the model and does not put it again assumes;
//   - ownership is history (ownership.ts): the status a replica wrote for this very version,
//     generation and lattice says it found the model ours, and what makes a model ours, its
//     oldest version, outlives every prune (ownership.ts prunable); a model deleted and put again
//     is announced (undeployed), and the list then shows another newest or deployed version;
//   - a pinned version names no content, so it is read as before; so is anything during a move,
//     while suspended, after an edit, or when the summary says otherwise.
// What a read of the model would still do, and this defers to the model's next read (within
// MODEL_CACHE_TTL_SECONDS): retry a prune wadm refused before.
import type { Application, Call } from './application.js';
import type { LatticeFacts } from './facts.js';
import { formerLattices } from './moves.js';
import type { Reason } from './reasons.js';

type ValidApplication = Extract<Application, { valid: true }>;

/** Verdicts only given for a model found ours with the version deployed (status.ts justDeployed, fromWadm). */
const ATTESTING: ReadonlySet<Reason> = new Set(['Deployed', 'Progressing', 'Reconciling', 'WaitingForHosts', 'ScalerFailed', 'Unhealthy']);

/** Whether the resource's own status says a replica found this version deployed in a model of ours, for this spec. */
export function attestsDeployed(call: Call, app: ValidApplication): boolean {
  if (app.suspend || app.pinnedVersion !== undefined || formerLattices(call).length > 0) return false;
  const previous = call.previousStatus as
    | { observedGeneration?: unknown; lattice?: unknown; version?: unknown; deployedVersion?: unknown; conditions?: unknown }
    | null
    | undefined;
  if (previous === null || typeof previous !== 'object') return false;
  const { version } = app.manifest;
  if (previous.observedGeneration !== app.ref.generation || previous.lattice !== app.lattice) return false;
  if (previous.version !== version || previous.deployedVersion !== version) return false;
  const ready = Array.isArray(previous.conditions)
    ? (previous.conditions as { type?: unknown; reason?: unknown }[]).find((c) => c?.type === 'Ready')
    : undefined;
  return typeof ready?.reason === 'string' && ATTESTING.has(ready.reason as Reason);
}

/**
 * Before the model is read: read the summary first when the status attests the version deployed;
 * 'answer' when the summary agrees (newest and deployed are that version), so that wadm's status
 * alone decides; undefined to read the model.
 */
export function fromSummary(
  call: Call,
  app: ValidApplication,
  facts: LatticeFacts,
): { action: { kind: 'read-summary' } } | 'answer' | undefined {
  // After a write or a raced put the model is read afresh: a summary never stands in for it.
  if (facts.raced || facts.writes.length > 0 || !attestsDeployed(call, app)) return undefined;
  if (facts.summary === undefined) return { action: { kind: 'read-summary' } };
  const { version } = app.manifest;
  return facts.summary !== null && facts.summary.version === version && facts.summary.deployed === version ? 'answer' : undefined;
}
