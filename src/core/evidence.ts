// Whether wadm's status describes the version we deployed, or may still be the previous version's.
// wadm's status names no version, and wadm publishes one only when it changes: right after a
// deploy its latest status can be the previous version's. Every replica must give the same answer
// whenever it started, so the anchor lives in the resource's status (status.deployedAt), which
// Metacontroller gives every replica, not in one replica's memory. wadm's status is taken as it is:
//   - when this replica deployed and has heard wadm publish since, or heard wadm announce the
//     deploy of this version and then publish it (exact, no clock involved);
//   - when this replica heard wadm publish it later than the anchor, past a margin for the clocks
//     of the replicas (the anchor may come from another one);
//   - when the previous status spoke of this deployed version without an anchor: a replica had
//     the evidence then, and its answer must not flip back;
//   - once the deploy grace has passed since the anchor: a deploy that changes nothing wadm
//     reports (say, only an annotation) is followed by no status at all. Not so for a status this
//     replica knows wadm published before the deploy (it knew the status before it saw the deploy
//     acknowledged or announced): that one speaks of what ran before, and a slow wadm reports the
//     new version later, so it is taken only once the report wait has passed with no word from
//     wadm. Taken at the grace, a slow wadm's old `deployed` gave Ready=True, then a flap.
// Otherwise the answer is Progressing, with the anchor kept and a short resync.
import { SCALER_STATES, type ScalerStatus } from '../schema/status.js';
import type { Call } from './application.js';
import type { StatusFacts } from './facts.js';

export const DEPLOY_GRACE_MS = 10_000;
/**
 * How long wadm may stay silent after a deploy before a status known to predate it is taken as it
 * is: six deploy graces (60 s), so that tests which shorten the grace shorten this with it.
 */
export const REPORT_WAIT_GRACES = 6;
export const REPORT_WAIT_MS = REPORT_WAIT_GRACES * DEPLOY_GRACE_MS;
/** How far apart the replicas' clocks may be (NTP keeps a cluster's within milliseconds). */
export const CLOCK_MARGIN_MS = 1_000;

/** Since when wadm's report on `version` is awaited; undefined when its status can be taken as it is. */
export function awaitingReport(call: Call, version: string, status: StatusFacts): number | undefined {
  if (status.followsOwnDeploy || status.followsDeployOf === version) return undefined;
  const previous = previousDeploy(call.previousStatus, version);
  if (status.predatesDeploy) return typeof previous === 'number' ? previous : call.now;
  if (previous === 'reported') return undefined;
  // Deployed by a call whose answer never reached the resource: from now on.
  const since = previous ?? call.now;
  const grace = call.deployGraceMs ?? DEPLOY_GRACE_MS;
  if (status.precedesDeployOf === version) return call.now - since >= REPORT_WAIT_GRACES * grace ? undefined : since;
  if (call.now - since >= grace) return undefined;
  if (status.heardAt !== undefined && status.heardAt > since + CLOCK_MARGIN_MS) return undefined;
  return since;
}

/** What the previous status says of a deploy of this version: since when it awaits wadm, 'reported', or nothing. */
function previousDeploy(previousStatus: unknown, version: string): number | 'reported' | undefined {
  const status = (previousStatus ?? {}) as { deployedVersion?: unknown; deployedAt?: unknown };
  if (status.deployedVersion !== version) return undefined;
  return status.deployedAt === undefined ? 'reported' : deployedAtIn(status);
}

/** A status's deployedAt as a time, if it is one (Metacontroller hands back whatever the status holds). */
export function deployedAtIn(status: { deployedAt?: unknown }): number | undefined {
  const at = typeof status.deployedAt === 'string' ? Date.parse(status.deployedAt) : NaN;
  return Number.isNaN(at) ? undefined : at;
}

/** status.deployedAt: RFC 3339 in UTC, milliseconds included. */
export function deployedAtOf(since: number): string {
  return new Date(since).toISOString();
}

/** What the previous status said about wadm, carried over while wadm cannot be asked. */
export function lastKnown(previous: unknown): { deployedVersion: string | null; deployedAt?: string; scalers: ScalerStatus[] } {
  const status = (previous ?? {}) as { deployedVersion?: unknown; deployedAt?: unknown; scalers?: unknown };
  const deployedVersion = typeof status.deployedVersion === 'string' ? status.deployedVersion : null;
  // Still awaiting wadm's report: the anchor must outlive an outage, or the answer after it could be taken as evidence.
  const at = deployedVersion === null ? undefined : deployedAtIn(status);
  const awaited = at === undefined ? {} : { deployedAt: deployedAtOf(at) };
  const scalers = Array.isArray(status.scalers)
    ? status.scalers
        .filter(isScalerStatus)
        .map(({ kind, name, status, message }) => (message === undefined ? { kind, name, status } : { kind, name, status, message }))
    : [];
  return { deployedVersion, ...awaited, scalers };
}

function isScalerStatus(value: unknown): value is ScalerStatus {
  const s = value as Partial<ScalerStatus> | null;
  return (
    typeof s === 'object' &&
    s !== null &&
    typeof s.kind === 'string' &&
    typeof s.name === 'string' &&
    (SCALER_STATES as readonly string[]).includes(s.status as string) &&
    (s.message === undefined || typeof s.message === 'string')
  );
}
