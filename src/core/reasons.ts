// Every reason the status can carry, with what it does to the conditions, how soon the hook looks
// again, and who can fix it. Reasons are API: users alert on them, Argo CD and Flux read them, and
// the status table of docs/resource.md is checked against this catalogue by a test.
import type { ConditionStatus, Phase, ScalerStatus } from '../schema/status.js';
import { lastKnown } from './evidence.js';
import type { LatticeRefusal } from './tenancy.js';
import { ADOPT_ANNOTATION, OWNER_ANNOTATION } from './names.js';

// The WasmCloudLattice's reasons: the other half of the catalogue, in a file of its own.
export { LATTICE_REASONS, type LatticeReason } from './lattice-reasons.js';

/** How soon to look again: settled needs no resync (the resync period still applies). */
export type Pace = 'settled' | 'progressing' | 'unavailable' | 'stalled';

interface ReasonInfo {
  /** The phases it appears with; the first is the usual one. */
  phases: readonly Phase[];
  ready: ConditionStatus;
  /** The kstatus abnormal-true condition it sets, if any. */
  condition?: 'Reconciling' | 'Stalled';
  pace: Pace;
  /** Who acts: the resource's author, the platform team (NATS, wadm, hosts, policy), or nobody (it resolves itself). */
  fixedBy: 'user' | 'platform' | 'nobody';
  /** Its row in docs/resource.md: what it means and what to do. */
  doc: string;
  /** Only the finalize hook reports it, while the resource is being deleted. */
  finalize?: true;
}

export const REASONS = {
  Deployed: {
    phases: ['Deployed'],
    ready: 'True',
    pace: 'settled',
    fixedBy: 'nobody',
    doc: 'wadm deployed the desired version and reports it deployed',
  },
  Progressing: {
    phases: ['Reconciling', 'Undeployed'],
    ready: 'False',
    condition: 'Reconciling',
    pace: 'progressing',
    fixedBy: 'nobody',
    doc: 'the desired version was just deployed (also after healing drift: the message says what wadm had deployed instead); with phase Undeployed wadm has not started it — wadm reconciles a lattice only while hosts in it send heartbeats, so check that hosts run in that lattice',
  },
  Moving: {
    phases: ['Reconciling', 'Undeployed'],
    ready: 'False',
    condition: 'Reconciling',
    pace: 'progressing',
    fixedBy: 'nobody',
    doc: '`spec.lattice` changed: the desired version is deployed in the new lattice and wadm does not report it deployed there yet, so the application is left running in the former lattice (its status says which) until it does; the message says what the new lattice reports. Any other reason during a move keeps its meaning and says the same of the former lattice',
  },
  Reconciling: {
    phases: ['Reconciling'],
    ready: 'False',
    condition: 'Reconciling',
    pace: 'progressing',
    fixedBy: 'nobody',
    doc: 'wadm is scaling components and providers',
  },
  WaitingForHosts: {
    phases: ['Waiting'],
    ready: 'False',
    condition: 'Reconciling',
    pace: 'progressing',
    fixedBy: 'platform',
    doc: 'wadm waits for hosts in the lattice',
  },
  ScalerFailed: {
    phases: ['Failed'],
    ready: 'False',
    condition: 'Stalled',
    pace: 'stalled',
    fixedBy: 'platform',
    doc: "a scaler failed (for example no host matches a spread's requirements); the message is wadm's, followed, when no host can be found for a spread and a `WasmCloudLattice` names the lattice, by the requirements no host meets and the labels the hosts have",
  },
  Unhealthy: {
    phases: ['Unhealthy'],
    ready: 'False',
    condition: 'Stalled',
    pace: 'stalled',
    fixedBy: 'platform',
    doc: 'wadm reports the application unhealthy',
  },
  Undeployed: {
    phases: ['Undeployed'],
    ready: 'False',
    pace: 'settled',
    fixedBy: 'user',
    doc: 'wadm holds versions of the application and none is deployed (reported by the `status` command, which compares with no resource)',
  },
  Suspended: { phases: ['Suspended'], ready: 'False', pace: 'settled', fixedBy: 'user', doc: '`spec.suspend` is true' },
  InvalidSpec: {
    phases: ['Invalid'],
    ready: 'False',
    condition: 'Stalled',
    pace: 'settled',
    fixedBy: 'user',
    doc: 'the spec is wrong; the message names the field. Nothing was sent to wadm',
  },
  ManifestTooLarge: {
    phases: ['Invalid'],
    ready: 'False',
    condition: 'Stalled',
    pace: 'settled',
    fixedBy: 'user',
    doc: "the rendered manifest is larger than the NATS server's `max_payload`; the message gives both sizes. Nothing was sent: shrink the spec (move large config into config references) or raise `max_payload`",
  },
  ModelTooLarge: {
    phases: ['Failed'],
    ready: 'False',
    condition: 'Stalled',
    pace: 'settled',
    fixedBy: 'user',
    doc: "wadm keeps every version of an application in one NATS message: the deployed version and the new one together would pass the NATS server's `max_payload`, so nothing was put (older versions are deleted to make room first, never the deployed one); the message gives both sizes: shrink the spec, or raise `max_payload`",
  },
  ManifestInvalid: {
    phases: ['Invalid'],
    ready: 'False',
    condition: 'Stalled',
    pace: 'settled',
    fixedBy: 'user',
    doc: "wadm refused the manifest; the message is wadm's",
  },
  LatticeNotAllowed: {
    phases: ['Failed', 'Undeployed'],
    ready: 'False',
    condition: 'Stalled',
    pace: 'settled',
    fixedBy: 'user',
    doc: 'the lattice policy (without one, `DEFAULT_LATTICE` alone) does not let this namespace use `spec.lattice`; the message says which rule refused it; nothing is sent to that lattice, not even a delete',
  },
  DeployFailed: {
    phases: ['Failed'],
    ready: 'False',
    condition: 'Stalled',
    pace: 'stalled',
    fixedBy: 'platform',
    doc: 'wadm refused the deploy (for example a shared application that is not deployed); retried every 60 s',
  },
  WadmRejected: {
    phases: ['Failed'],
    ready: 'False',
    condition: 'Stalled',
    pace: 'stalled',
    fixedBy: 'platform',
    doc: "wadm refused an undeploy; the message is wadm's; retried every 60 s",
  },
  OwnershipConflict: {
    phases: ['Failed'],
    ready: 'False',
    condition: 'Stalled',
    pace: 'settled',
    fixedBy: 'user',
    doc: 'no version of the wadm application carries this resource as its owner: it belongs to another resource or was created outside; rename, change `spec.lattice`, or adopt',
  },
  NameCollision: {
    phases: ['Failed'],
    ready: 'False',
    condition: 'Stalled',
    pace: 'settled',
    fixedBy: 'user',
    doc: "wadm would store this application under a key that another lattice's application or another lattice's list of applications already uses (wadm keys models by `<lattice>-<name>`); nothing was written: rename the resource or choose a `spec.lattice` without `-` (see Shared wadm and name collisions)",
  },
  VersionConflict: {
    phases: ['Failed'],
    ready: 'False',
    condition: 'Stalled',
    pace: 'settled',
    fixedBy: 'user',
    doc: '`spec.version` names a version with other content; bump it',
  },
  LatticeUnavailable: {
    phases: ['Unknown'],
    ready: 'Unknown',
    condition: 'Reconciling',
    pace: 'unavailable',
    fixedBy: 'platform',
    doc: 'NATS or wadm cannot be reached (disconnected, no responders, timeout, storage errors); the last known wadm fields are kept and the hook retries; at finalize the finalizer stays until wadm shows what it holds',
  },
  LatticeNotPermitted: {
    phases: ['Failed', 'Undeployed'],
    ready: 'False',
    condition: 'Stalled',
    pace: 'stalled',
    fixedBy: 'platform',
    doc: "NATS refuses this service's user a subject of that lattice (permissions violation); the message names the subject and what to grant (SECURITY.md); other lattices keep working; retried every 60 s. At finalize the finalizer stays and the hook retries: to leave the application in wadm instead, set `deletionPolicy: Orphan` or remove the finalizer by hand",
  },
  Deleted: {
    phases: ['Undeployed'],
    ready: 'False',
    pace: 'settled',
    fixedBy: 'nobody',
    finalize: true,
    doc: 'the application and all its versions were deleted from wadm (or never existed)',
  },
  Orphaned: {
    phases: ['Undeployed'],
    ready: 'False',
    pace: 'settled',
    fixedBy: 'nobody',
    finalize: true,
    doc: '`deletionPolicy: Orphan`: the application keeps running in wadm',
  },
  NotOwned: {
    phases: ['Undeployed'],
    ready: 'False',
    pace: 'settled',
    fixedBy: 'nobody',
    finalize: true,
    doc: "the wadm application was not this resource's, so it was left as it is",
  },
  DeleteFailed: {
    phases: ['Failed'],
    ready: 'False',
    condition: 'Stalled',
    pace: 'stalled',
    fixedBy: 'platform',
    finalize: true,
    doc: "wadm refused the delete; the message is wadm's; the finalizer stays and the hook retries",
  },
} as const satisfies Record<string, ReasonInfo>;

export type Reason = keyof typeof REASONS;

/** What the core concluded about an application: status/build turns it into the written status. */
export interface Verdict {
  phase: Phase;
  reason: Reason;
  message: string;
  version?: string;
  deployedVersion?: string | null;
  /** Since when wadm's report on deployedVersion is awaited (evidence.ts). */
  deployedAt?: string;
  scalers?: ScalerStatus[];
}

/** A verdict in the reason's usual phase. */
export function verdict(
  reason: Reason,
  message: string,
  fields: Omit<Verdict, 'reason' | 'message' | 'phase'> & { phase?: Phase } = {},
): Verdict {
  return { phase: REASONS[reason].phases[0], ...fields, reason, message };
}

// The words for each situation. Messages never name a resource of another namespace: tenants
// sharing a wadm must not learn each other's names.

/** A lattice the namespace may not target, and the rule that refused it (naming the caller's own
 *  namespace only); on finalize nothing is deleted there, and the resource goes. */
export function latticeNotAllowed(namespace: string, lattice: string, refused: LatticeRefusal, finalizing = false): Verdict {
  const byDefault = refused.rule === 'default-only';
  const rule = byDefault
    ? `there is no lattice policy, so only DEFAULT_LATTICE ("${refused.defaultLattice}") is allowed`
    : `no rule of the lattice policy grants namespace "${namespace}" the lattice "${lattice}"`;
  if (finalizing)
    return verdict('LatticeNotAllowed', `Left in wadm: namespace "${namespace}" may not use lattice "${lattice}": ${rule}`, UNDEPLOYED);
  const remedy = byDefault
    ? `set spec.lattice to "${refused.defaultLattice}" to use it (without spec.lattice an application stays in the lattice it is in), or ask the platform team to allow "${lattice}" with a lattice policy (LATTICE_POLICY_FILE: the chart's latticePolicy values or the existing-lattice kustomize component)`
    : 'choose a lattice the policy grants this namespace, or ask the platform team for a rule';
  return verdict('LatticeNotAllowed', `namespace "${namespace}" may not deploy to lattice "${lattice}": ${rule}; ${remedy}`);
}
const UNDEPLOYED = { phase: 'Undeployed' } as const;

/** The NATS payload of a put: the body and the Content-Type header we send with it. */
export function putBytes(manifest: { bytes: number }): number {
  return manifest.bytes + PUT_HEADER_BYTES;
}
const PUT_HEADER_BYTES = 'NATS/1.0\r\nContent-Type: application/json\r\n\r\n'.length;

export function manifestTooLarge(manifest: { version: string; bytes: number }, maxPayloadBytes: number): Verdict {
  const message =
    `the rendered manifest is ${putBytes(manifest)} bytes, more than the NATS server's max_payload of ${maxPayloadBytes} bytes, ` +
    'so wadm can never receive it: shrink the spec (for example move large config into config references) or raise max_payload on the NATS servers';
  return verdict('ManifestTooLarge', message, { version: manifest.version });
}

/** NATS refused a subject of this lattice: the platform grants it, retrying soon changes nothing. */
export function latticeNotPermitted(lattice: string, message: string, version: string | undefined, previous: unknown): Verdict {
  const last = lastKnown(previous);
  const text = `Cannot use lattice "${lattice}": ${message}; will retry`;
  return verdict('LatticeNotPermitted', text, {
    ...(version !== undefined ? { version } : {}),
    deployedVersion: last.deployedVersion,
    ...(last.deployedAt !== undefined ? { deployedAt: last.deployedAt } : {}),
    scalers: last.scalers,
  });
}

/** At finalize nothing shows what wadm holds there: the finalizer stays (Orphan, or removing it by hand, lets go). */
export function deleteNotPermitted(lattice: string, message: string, version: string | undefined, previous: unknown): Verdict {
  const wayOut = 'to leave the application in wadm instead, set spec.deletionPolicy to Orphan or remove the finalizer by hand';
  const text = `Cannot delete in lattice "${lattice}": ${message}; the finalizer stays until that is granted (${wayOut}); will retry`;
  return { ...latticeNotPermitted(lattice, message, version, previous), message: text };
}

/** Even the deployed version and the new one would not fit in the one NATS message wadm stores them in. */
export function modelTooLarge(
  version: string,
  size: { bytes: number; limit: number },
  maxPayloadBytes: number,
  deployedVersion: string | null,
): Verdict {
  const together =
    deployedVersion === null
      ? `version ${version} and the version that keeps this resource its owner`
      : `the deployed version ${deployedVersion} and version ${version}`;
  const message =
    `wadm keeps every version of an application in one NATS message: ${together} would take ${size.bytes} bytes, ` +
    `more than the ${size.limit} bytes that the NATS server's max_payload of ${maxPayloadBytes} bytes leaves for it, so nothing was put ` +
    '(older versions are deleted to make room first); shrink the spec, or raise max_payload on the NATS servers';
  return verdict('ModelTooLarge', message, { version, deployedVersion });
}

export function unavailable(
  lattice: string,
  cause: { reason: string; message: string },
  version: string | undefined,
  previous: unknown,
): Verdict {
  const message = `Cannot reach wadm for lattice "${lattice}" (${cause.reason}): ${cause.message}; will retry`;
  const last = lastKnown(previous);
  return verdict('LatticeUnavailable', message, {
    ...(version !== undefined ? { version } : {}),
    deployedVersion: last.deployedVersion,
    ...(last.deployedAt !== undefined ? { deployedAt: last.deployedAt } : {}),
    scalers: last.scalers,
  });
}

/** Who holds a model that is not ours, as far as this resource's namespace may know. */
export function heldBy(app: { ref: { namespace: string } }, owners: (string | null)[]): string {
  const resources = [...new Set(owners.filter((o): o is string => o !== null))].sort();
  if (resources.length === 0) return `was not created by a WasmCloudApplication (no ${OWNER_ANNOTATION} annotation)`;
  const neighbour = resources.find((owner) => owner.startsWith(`${app.ref.namespace}/`));
  return neighbour ? `belongs to ${neighbour}` : 'belongs to a resource in another namespace';
}

export function ownershipConflict(
  app: { ref: { namespace: string; name: string }; lattice: string },
  owners: (string | null)[],
  version: string,
): Verdict {
  const unowned = owners.every((o) => o === null);
  const advice = unowned
    ? `to take it over, annotate this resource with ${ADOPT_ANNOTATION}: "true"`
    : 'rename this resource or choose another spec.lattice';
  // Nothing changes until someone else acts; the CompositeController's resyncPeriodSeconds looks again.
  return verdict('OwnershipConflict', `wadm application "${app.ref.name}" in lattice "${app.lattice}" ${heldBy(app, owners)}; ${advice}`, {
    version,
  });
}

export function rejected(
  step: string,
  message: string,
  version: string,
  model: { deployedVersion: string | null } | null | undefined,
): Verdict {
  const deployedVersion = model?.deployedVersion ?? null;
  if (step === 'put') return verdict('ManifestInvalid', `wadm rejected the manifest: ${message}`, { version, deployedVersion });
  // A deploy can be refused for reasons outside this resource (a shared application not yet
  // deployed, a component id used by another application): look again later.
  return verdict(step === 'deploy' ? 'DeployFailed' : 'WadmRejected', `wadm refused to ${step} version "${version}": ${message}`, {
    version,
    deployedVersion,
  });
}

export function suspended(version: string): Verdict {
  return verdict('Suspended', `Suspended: version ${version} is not deployed (spec.suspend is true)`, { version, deployedVersion: null });
}
