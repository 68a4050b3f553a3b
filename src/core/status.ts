// Turns a verdict into the status Metacontroller writes, and wadm's own status into a verdict.
// Deterministic: the only clock value is lastTransitionTime, kept from the previous status unless
// the condition's status flips, so an unchanged situation gives byte-identical status.
import {
  type ApplicationStatus,
  type Condition,
  type ConditionStatus,
  type ConditionType,
  type ScalerState,
  type ScalerStatus,
} from '../schema/status.js';
import type { Drift, LatticeStatus, StatusFacts } from './facts.js';
import { deployedAtOf } from './evidence.js';
import { byCodeUnits } from './order.js';
import { REASONS, verdict, type Pace, type Verdict } from './reasons.js';

export interface StatusContext {
  generation: number;
  lattice: string;
  /** Lattices the application was in before and may still be in (moves.ts); written only when some are. */
  formerLattices?: string[];
  /** The parent's current status, possibly stale: only used to keep transition times. */
  previous: unknown;
  now: number;
  /** Who the resource is (`<namespace>/<name>`): its resync's jitter (resyncJitter). Absent: none (the CLI schedules nothing). */
  identity?: string;
}

export interface StatusAnswer {
  status: ApplicationStatus;
  resyncAfterSeconds?: number;
}

const MAX_MESSAGE = 1024;

export function buildStatus(context: StatusContext, verdict: Verdict): StatusAnswer {
  const info = REASONS[verdict.reason];
  const message = truncate(verdict.message);
  const conditions = kstatusConditions(context, { reason: verdict.reason, message, ...info });

  const status: ApplicationStatus = { observedGeneration: context.generation, lattice: context.lattice };
  const former = context.formerLattices ?? [];
  if (former.length > 0) status.formerLattices = former;
  if (verdict.version !== undefined) status.version = verdict.version;
  if (verdict.deployedVersion) status.deployedVersion = verdict.deployedVersion;
  if (verdict.deployedVersion && verdict.deployedAt) status.deployedAt = verdict.deployedAt;
  status.phase = verdict.phase;
  status.message = message;
  if (verdict.scalers && verdict.scalers.length > 0) status.scalers = verdict.scalers;
  status.conditions = conditions;

  const readySince = Date.parse(conditions[0]!.lastTransitionTime);
  // A former lattice still to clean up is work to come back to, whatever this lattice's verdict.
  const pace = former.length > 0 && info.pace === 'settled' ? 'unavailable' : info.pace;
  const delay = resyncDelay(pace, context.now - readySince);
  if (delay === undefined) return { status };
  return { status, resyncAfterSeconds: context.identity === undefined ? delay : resyncJitter(delay, context.identity) };
}

/** The resync's spread: ±10 % of its delay. */
export const RESYNC_JITTER = 0.1;

/**
 * The delay, moved by up to ±10 % by the resource's identity, to 0.1 s. An outage ends for every
 * resource at once, and without jitter their resyncs would then come in lockstep, all at the same
 * moment, each time. The spread comes from a hash of who the resource is, never from chance or
 * the clock: the same call still gets a byte-identical answer (a changed answer is a status write,
 * and the answer is cached under its ETag).
 */
export function resyncJitter(seconds: number, identity: string): number {
  const fraction = hash32(identity) / 2 ** 32; // [0, 1)
  return Math.round(seconds * (1 + RESYNC_JITTER * (2 * fraction - 1)) * 10) / 10;
}

/**
 * FNV-1a over the text, then murmur3's finaliser: FNV-1a alone leaves names that differ in their
 * last characters (app-1, app-2) close in its high bits, which the fraction reads.
 */
function hash32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
  return (hash ^ (hash >>> 16)) >>> 0;
}

/**
 * Ready, then the abnormal-true condition the reason sets (if any), all with the same reason and
 * message; a condition keeps its lastTransitionTime from the previous status unless its status flips.
 * For every resource the service writes (applications and lattices alike).
 */
export function kstatusConditions(
  context: { previous: unknown; generation: number; now: number },
  said: { reason: string; message: string; ready: ConditionStatus; condition?: 'Reconciling' | 'Stalled' },
): Condition[] {
  const previous = previousConditions(context.previous);
  const condition = (type: ConditionType, status: ConditionStatus): Condition => ({
    type,
    status,
    reason: said.reason,
    message: said.message,
    lastTransitionTime: keptTime(previous.get(type), status, context.now),
    observedGeneration: context.generation,
  });
  const conditions = [condition('Ready', said.ready)];
  if (said.condition !== undefined) conditions.push(condition(said.condition, 'True'));
  return conditions;
}

/** Short and growing while something is expected to change; none once settled. */
export function resyncDelay(pace: Pace, ageMs: number): number | undefined {
  const steps: Record<Pace, number[]> = {
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

/** The drift the previous status said our deploy of this version healed, if it did. */
export function healedBefore(previousStatus: unknown, version: string): string | undefined {
  const message = (previousStatus as { message?: unknown } | null | undefined)?.message;
  if (typeof message !== 'string') return undefined;
  // During a move the message is decorated (moves.ts whileMoving): a prefix, and a note after.
  const bare = message.replace(/^Moving to lattice "[^"]*": /, '');
  const healed = `; redeployed version ${version}; waiting for wadm to report its status`;
  const end = bare.indexOf(healed);
  if (end < 0 || !bare.startsWith('wadm had ')) return undefined;
  const after = bare.slice(end + healed.length);
  return after === '' || after.startsWith('; ') ? bare.slice(0, end) : undefined;
}

/** The first half of the status message after healing drift. */
export function healedDrift(replacing: Drift): string {
  return replacing.deployed === null
    ? 'wadm had nothing deployed (undeployed outside Kubernetes)'
    : `wadm had version ${replacing.deployed} deployed outside Kubernetes`;
}

/**
 * wadm deployed the version (`since`: when, status.deployedAt); what it said before is about the
 * previous version. Without `since` (the CLI's view) no anchor is written.
 */
export function justDeployed(version: string, healed?: string, since?: number): Verdict {
  const message = `${healed ? `${healed}; redeployed` : 'Deployed'} version ${version}; waiting for wadm to report its status`;
  return verdict('Progressing', message, {
    version,
    deployedVersion: version,
    ...(since !== undefined ? { deployedAt: deployedAtOf(since) } : {}),
  });
}

/** Deployed as wanted: what wadm says about it decides the verdict (status-conventions §3). */
export function fromWadm(version: string, lattice: string, facts: StatusFacts): Verdict {
  if (facts.predatesDeploy) return justDeployed(version);
  const fields = { version, deployedVersion: version, scalers: scalersOf(facts.status) };
  const said = facts.status.status.message ?? '';
  switch (normaliseStatus(facts.status.status.type)) {
    case 'Deployed':
      return verdict('Deployed', said || `Version ${version} is deployed`, fields);
    case 'Reconciling':
      return verdict('Reconciling', said || `wadm is reconciling version ${version}`, fields);
    case 'Waiting':
      return verdict('WaitingForHosts', said || `wadm is waiting for hosts in lattice "${lattice}"`, fields);
    case 'Undeployed':
      return verdict(
        'Progressing',
        `wadm has not started version ${version} yet (wadm reconciles a lattice only while hosts in it send heartbeats)`,
        { ...fields, phase: 'Undeployed' },
      );
    case 'Failed':
      return verdict('ScalerFailed', said || firstFailing(fields.scalers) || `wadm reports version ${version} failed`, fields);
    case 'Unhealthy':
      return verdict('Unhealthy', said || firstFailing(fields.scalers) || `wadm reports version ${version} unhealthy`, fields);
  }
}

/** wadm's StatusType, capitalised; `compensating` and `ready` are old aliases wadm still accepts. */
export function normaliseStatus(type: string): ScalerState {
  if (type === 'compensating') return 'Reconciling';
  if (type === 'ready') return 'Deployed';
  return (type.charAt(0).toUpperCase() + type.slice(1)) as ScalerState;
}

/** Sorted, because wadm's order is its own business and status must not churn. */
function scalersOf(status: LatticeStatus): ScalerStatus[] {
  const scalers = (status.scalers ?? []).map((s): ScalerStatus => {
    const entry: ScalerStatus = { kind: s.kind ?? '', name: s.name ?? '', status: normaliseStatus(s.status.type) };
    if (s.status.message) entry.message = s.status.message;
    return entry;
  });
  return scalers.sort(
    (a, b) => byCodeUnits(a.kind, b.kind) || byCodeUnits(a.name, b.name) || byCodeUnits(a.message ?? '', b.message ?? ''),
  );
}

function firstFailing(scalers: ScalerStatus[]): string | undefined {
  return scalers.find((s) => s.status !== 'Deployed' && s.message)?.message;
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

/** A message of at most 1,024 characters, cut with "…". */
export function truncate(message: string): string {
  if (message.length <= MAX_MESSAGE) return message;
  // Never cut between the two halves of a surrogate pair (an emoji, say).
  const cut = /[\uD800-\uDBFF]/.test(message.charAt(MAX_MESSAGE - 2)) ? MAX_MESSAGE - 2 : MAX_MESSAGE - 1;
  return `${message.slice(0, cut)}…`;
}
