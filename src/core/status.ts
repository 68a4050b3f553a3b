// Turns a verdict (what the core concluded) into the status Metacontroller writes. Deterministic:
// the only clock value is lastTransitionTime, kept from the previous status unless the
// condition's status flips, so an unchanged situation gives byte-identical status.
import type { ApplicationStatus, Condition, ConditionStatus, ConditionType, Phase, ScalerStatus } from '../schema/status.js';

export interface Verdict {
  phase: Phase;
  ready: { status: ConditionStatus; reason: string; message: string };
  /** Present = the condition is True (kstatus abnormal-true conditions are absent otherwise). */
  reconciling?: { reason: string; message: string };
  stalled?: { reason: string; message: string };
  version?: string;
  deployedVersion?: string | null;
  scalers?: ScalerStatus[];
  /** How soon to look again: settled needs no resync. */
  pace: 'settled' | 'progressing' | 'unavailable' | 'stalled';
}

export interface StatusContext {
  generation: number;
  lattice: string;
  /** The parent's current status, possibly stale: only used to keep transition times. */
  previous: unknown;
  now: number;
}

export interface StatusAnswer {
  status: ApplicationStatus;
  resyncAfterSeconds?: number;
}

const MAX_MESSAGE = 1024;

export function buildStatus(context: StatusContext, verdict: Verdict): StatusAnswer {
  const previous = previousConditions(context.previous);
  const condition = (type: ConditionType, status: ConditionStatus, reason: string, message: string): Condition => ({
    type,
    status,
    reason,
    message: truncate(message),
    lastTransitionTime: keptTime(previous.get(type), status, context.now),
    observedGeneration: context.generation,
  });
  const conditions = [condition('Ready', verdict.ready.status, verdict.ready.reason, verdict.ready.message)];
  if (verdict.reconciling) conditions.push(condition('Reconciling', 'True', verdict.reconciling.reason, verdict.reconciling.message));
  if (verdict.stalled) conditions.push(condition('Stalled', 'True', verdict.stalled.reason, verdict.stalled.message));

  const status: ApplicationStatus = { observedGeneration: context.generation, lattice: context.lattice };
  if (verdict.version !== undefined) status.version = verdict.version;
  if (verdict.deployedVersion) status.deployedVersion = verdict.deployedVersion;
  status.phase = verdict.phase;
  status.message = truncate(verdict.ready.message);
  if (verdict.scalers && verdict.scalers.length > 0) status.scalers = verdict.scalers;
  status.conditions = conditions;

  const readySince = Date.parse(conditions[0]!.lastTransitionTime);
  const resyncAfterSeconds = resyncDelay(verdict.pace, context.now - readySince);
  return resyncAfterSeconds === undefined ? { status } : { status, resyncAfterSeconds };
}

/** Short and growing while something is expected to change; none once settled. */
export function resyncDelay(pace: Verdict['pace'], ageMs: number): number | undefined {
  const steps: Record<Verdict['pace'], number[]> = {
    settled: [],
    progressing: [2, 5, 15, 60],
    unavailable: [5, 10, 30, 60],
    stalled: [60, 60, 60, 60],
  };
  const delays = steps[pace];
  if (delays.length === 0) return undefined;
  const bucket = ageMs < 15_000 ? 0 : ageMs < 60_000 ? 1 : ageMs < 300_000 ? 2 : 3;
  return delays[bucket];
}

function keptTime(previous: { status: string; time: string } | undefined, status: ConditionStatus, now: number): string {
  if (previous && previous.status === status) return previous.time;
  return new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function previousConditions(previousStatus: unknown): Map<string, { status: string; time: string }> {
  const found = new Map<string, { status: string; time: string }>();
  const conditions = (previousStatus as { conditions?: unknown } | null | undefined)?.conditions;
  if (!Array.isArray(conditions)) return found;
  for (const c of conditions as Record<string, unknown>[]) {
    const { type, status, lastTransitionTime } = c ?? {};
    if (typeof type === 'string' && typeof status === 'string' && typeof lastTransitionTime === 'string' && isTime(lastTransitionTime)) {
      found.set(type, { status, time: lastTransitionTime });
    }
  }
  return found;
}

function isTime(text: string): boolean {
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(text) && !Number.isNaN(Date.parse(text));
}

function truncate(message: string): string {
  if (message.length <= MAX_MESSAGE) return message;
  // Never cut between the two halves of a surrogate pair (an emoji, say).
  const cut = /[\uD800-\uDBFF]/.test(message.charAt(MAX_MESSAGE - 2)) ? MAX_MESSAGE - 2 : MAX_MESSAGE - 1;
  return `${message.slice(0, cut)}…`;
}
