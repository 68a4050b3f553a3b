// Every situation the hook can report, as a Verdict with a stable reason. Reasons are API:
// users alert on them and the README's troubleshooting table lists them.
import type { StatusFacts } from './facts.js';
import type { ModelFacts, UnavailableReason, WadmStatusType } from '../lattice/wire.js';
import { ADOPT_ANNOTATION, OWNER_ANNOTATION } from './names.js';
import { SCALER_STATES, type ScalerState, type ScalerStatus } from '../schema/status.js';
import type { Verdict } from './status.js';

export function invalidSpec(problems: string[]): Verdict {
  const message = `Invalid spec: ${problems.join('; ')}`;
  return {
    phase: 'Invalid',
    ready: { status: 'False', reason: 'InvalidSpec', message },
    stalled: { reason: 'InvalidSpec', message },
    pace: 'settled',
  };
}

export function latticeNotAllowed(namespace: string, lattice: string): Verdict {
  const message = `namespace "${namespace}" may not deploy to lattice "${lattice}": the lattice policy does not allow it; choose an allowed spec.lattice or ask the platform team`;
  return {
    phase: 'Failed',
    ready: { status: 'False', reason: 'LatticeNotAllowed', message },
    stalled: { reason: 'LatticeNotAllowed', message },
    pace: 'settled',
  };
}

export function ownershipConflict(lattice: string, name: string, model: ModelFacts, version: string): Verdict {
  const owner = model.latest.owner;
  const message =
    owner === null
      ? `wadm application "${name}" in lattice "${lattice}" was not created by this resource (it has no ${OWNER_ANNOTATION} annotation); ` +
        `to take it over, annotate this resource with ${ADOPT_ANNOTATION}: "true"`
      : `wadm application "${name}" in lattice "${lattice}" belongs to ${owner}; rename this resource or choose another spec.lattice`;
  // Nothing changes until someone else acts; the CompositeController's resyncPeriodSeconds looks again.
  return stalledFailure('OwnershipConflict', message, version, 'settled');
}

export function versionConflict(version: string, pinned: boolean): Verdict {
  const message = pinned
    ? `version "${version}" already exists in wadm with different content: change spec.version to publish this spec`
    : `version "${version}" already exists in wadm with content this resource did not write`;
  return stalledFailure('VersionConflict', message, version, 'settled');
}

export function rejected(step: string, message: string, version: string, model: ModelFacts | null | undefined): Verdict {
  if (step === 'put') {
    const text = `wadm rejected the manifest: ${message}`;
    return {
      phase: 'Invalid',
      ready: { status: 'False', reason: 'ManifestInvalid', message: text },
      stalled: { reason: 'ManifestInvalid', message: text },
      version,
      deployedVersion: model?.deployedVersion ?? null,
      pace: 'settled',
    };
  }
  // A deploy can be refused for reasons outside this resource (a shared application not yet
  // deployed, a component id used by another application): look again later.
  const verdict = stalledFailure(step === 'deploy' ? 'DeployFailed' : 'WadmRejected', `wadm refused to ${step} version "${version}": ${message}`, version, 'stalled');
  return { ...verdict, deployedVersion: model?.deployedVersion ?? null };
}

function stalledFailure(reason: string, message: string, version: string, pace: Verdict['pace']): Verdict {
  return {
    phase: 'Failed',
    ready: { status: 'False', reason, message },
    stalled: { reason, message },
    version,
    pace,
  };
}

export function suspended(version: string): Verdict {
  return {
    phase: 'Suspended',
    ready: { status: 'False', reason: 'Suspended', message: `Suspended: version ${version} is not deployed (spec.suspend is true)` },
    version,
    deployedVersion: null,
    pace: 'settled',
  };
}

export function unavailable(
  lattice: string,
  cause: { reason: UnavailableReason; message: string },
  version: string | undefined,
  previous: unknown,
): Verdict {
  const message = `Cannot reach wadm for lattice "${lattice}" (${cause.reason}): ${cause.message}; will retry`;
  const last = lastKnown(previous);
  return {
    phase: 'Unknown',
    ready: { status: 'Unknown', reason: 'LatticeUnavailable', message },
    reconciling: { reason: 'LatticeUnavailable', message },
    ...(version !== undefined ? { version } : {}),
    deployedVersion: last.deployedVersion,
    scalers: last.scalers,
    pace: 'unavailable',
  };
}

/** wadm acknowledged our deploy; anything it said before is about the previous version. */
export function justDeployed(version: string): Verdict {
  const message = `Deployed version ${version}; waiting for wadm to report its status`;
  return {
    version,
    deployedVersion: version,
    phase: 'Reconciling',
    ready: { status: 'False', reason: 'Progressing', message },
    reconciling: { reason: 'Progressing', message },
    pace: 'progressing',
  };
}

/** Deployed as wanted: what wadm says about it decides the verdict (status-conventions §3). */
export function fromWadm(version: string, lattice: string, facts: StatusFacts): Verdict {
  const base = { version, deployedVersion: version };
  if (facts.predatesDeploy) return justDeployed(version);
  const type = normalise(facts.status.status.type);
  const scalers = scalersOf(facts);
  const said = facts.status.status.message ?? '';
  const progressing = (phase: Verdict['phase'], reason: string, message: string): Verdict => ({
    ...base,
    phase,
    scalers,
    ready: { status: 'False', reason, message },
    reconciling: { reason, message },
    pace: 'progressing',
  });
  const stalled = (phase: Verdict['phase'], reason: string, message: string): Verdict => ({
    ...base,
    phase,
    scalers,
    ready: { status: 'False', reason, message },
    stalled: { reason, message },
    pace: 'stalled',
  });
  switch (type) {
    case 'deployed':
      return { ...base, phase: 'Deployed', scalers, ready: { status: 'True', reason: 'Deployed', message: said || `Version ${version} is deployed` }, pace: 'settled' };
    case 'reconciling':
      return progressing('Reconciling', 'Reconciling', said || `wadm is reconciling version ${version}`);
    case 'waiting':
      return progressing('Waiting', 'WaitingForHosts', said || `wadm is waiting for hosts in lattice "${lattice}"`);
    case 'undeployed':
      return progressing(
        'Undeployed',
        'Progressing',
        `wadm has not started version ${version} yet (wadm reconciles a lattice only while hosts in it send heartbeats)`,
      );
    case 'failed':
      return stalled('Failed', 'ScalerFailed', said || firstFailing(scalers) || `wadm reports version ${version} failed`);
    case 'unhealthy':
      return stalled('Unhealthy', 'Unhealthy', said || firstFailing(scalers) || `wadm reports version ${version} unhealthy`);
  }
}

function normalise(type: string): WadmStatusType {
  if (type === 'compensating') return 'reconciling';
  if (type === 'ready') return 'deployed';
  return type as WadmStatusType;
}

function capitalise(type: WadmStatusType): ScalerState {
  return (type.charAt(0).toUpperCase() + type.slice(1)) as ScalerState;
}

/** Sorted, because wadm's order is its own business and status must not churn. */
function scalersOf(facts: StatusFacts): ScalerStatus[] {
  const scalers = (facts.status.scalers ?? []).map((s): ScalerStatus => {
    const entry: ScalerStatus = { kind: s.kind ?? '', name: s.name ?? '', status: capitalise(normalise(s.status.type)) };
    if (s.status.message) entry.message = s.status.message;
    return entry;
  });
  return scalers.sort((a, b) => compare(a.kind, b.kind) || compare(a.name, b.name) || compare(a.message ?? '', b.message ?? ''));
}

function firstFailing(scalers: ScalerStatus[]): string | undefined {
  return scalers.find((s) => s.status !== 'Deployed' && s.message)?.message;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** What the previous status said about wadm, carried over while wadm cannot be asked. */
function lastKnown(previous: unknown): { deployedVersion: string | null; scalers: ScalerStatus[] } {
  const status = (previous ?? {}) as { deployedVersion?: unknown; scalers?: unknown };
  const deployedVersion = typeof status.deployedVersion === 'string' ? status.deployedVersion : null;
  const scalers = Array.isArray(status.scalers)
    ? status.scalers.filter(isScalerStatus).map(({ kind, name, status, message }) => (message === undefined ? { kind, name, status } : { kind, name, status, message }))
    : [];
  return { deployedVersion, scalers };
}

function isScalerStatus(value: unknown): value is ScalerStatus {
  const s = value as Partial<ScalerStatus> | null;
  return (
    typeof s === 'object' && s !== null && typeof s.kind === 'string' && typeof s.name === 'string' &&
    (SCALER_STATES as readonly string[]).includes(s.status as string) && (s.message === undefined || typeof s.message === 'string')
  );
}
