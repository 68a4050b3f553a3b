// The reasons a WasmCloudLattice's status can carry: the lattice's part of the reasons catalogue
// (reasons.ts re-exports it; the two share no reason name). Reasons are API, as for applications:
// docs/lattice.md's status table is checked against this catalogue by a test.
import type { ConditionStatus } from '../schema/status.js';

interface LatticeReasonInfo {
  ready: ConditionStatus;
  /** The kstatus abnormal-true condition it sets, if any. */
  condition?: 'Reconciling' | 'Stalled';
  /** Who acts: the resource's author, the platform team (NATS, wadm, hosts), or nobody (it resolves itself). */
  fixedBy: 'user' | 'platform' | 'nobody';
  /** Its row in docs/lattice.md: what it means and what to do. */
  doc: string;
}

export const LATTICE_REASONS = {
  LatticeReady: {
    ready: 'True',
    fixedBy: 'nobody',
    doc: 'wadm answers, and the hosts the spec asks for (at least one without `spec.minHosts`) send heartbeats',
  },
  ListeningForHosts: {
    ready: 'False',
    condition: 'Reconciling',
    fixedBy: 'nobody',
    doc: 'the service started listening to the heartbeats less than a heartbeat period ago (hosts send one every 30 s), and the hosts heard so far do not give what Ready needs yet; the message says what is missing. Once they do, the lattice is Ready even within that period (the message says more may yet be heard)',
  },
  HostsMissing: {
    ready: 'False',
    condition: 'Reconciling',
    fixedBy: 'platform',
    doc: 'fewer hosts heartbeat than `spec.minHosts`, or than an entry of `spec.requiredHosts` asks with its labels; the message says which and what the hosts have: start hosts (with those labels) in the lattice',
  },
  WadmUnavailable: {
    ready: 'Unknown',
    condition: 'Reconciling',
    fixedBy: 'platform',
    doc: "NATS cannot be reached, or the lattice's wadm does not answer (no responders, timeout); the hosts are still shown, from their heartbeats; the hook retries",
  },
  NatsNotPermitted: {
    ready: 'False',
    condition: 'Stalled',
    fixedBy: 'platform',
    doc: "NATS refuses the service's user the lattice's heartbeat subjects or wadm's API for it; the message names the subject and what to grant (SECURITY.md); retried every 5 minutes",
  },
  InvalidLatticeSpec: {
    ready: 'False',
    condition: 'Stalled',
    fixedBy: 'user',
    doc: 'the spec is wrong, or the name cannot be a lattice id without `spec.lattice`; the message names the field. Nothing was asked of NATS',
  },
} as const satisfies Record<string, LatticeReasonInfo>;

export type LatticeReason = keyof typeof LATTICE_REASONS;
