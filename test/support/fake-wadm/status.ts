// Status payloads (reference §2.1, §6): aggregation, the fixed statuses wadm uses, and the
// per-scaler statuses a simulated lattice reports.
import type { ScalerInfo } from './scalers.js';
import type { ScalerStatus, Status, StatusInfo, StatusType } from './types.js';

/** `impl Add for StatusType`: the earlier entry wins; an empty list sums to `undeployed`. */
const PRECEDENCE: readonly StatusType[] = ['failed', 'undeployed', 'waiting', 'reconciling', 'unhealthy', 'deployed'];

export function aggregate(types: StatusType[]): StatusType {
  if (types.length === 0) return 'undeployed';
  return PRECEDENCE.find((t) => types.includes(t)) ?? 'undeployed';
}

export function info(type: StatusType, message = ''): StatusInfo {
  return message === '' ? { type } : { type, message };
}

/** `Status::new`: deprecated `version`/`components` always empty, `scalers` omitted when empty. */
export function status(top: StatusInfo, scalers: ScalerStatus[] = []): Status {
  return scalers.length > 0
    ? { status: top, scalers, version: '', components: [] }
    : { status: top, version: '', components: [] };
}

/** `detailed_scaler_status`: aggregated type, non-empty scaler messages joined with ", ". */
export function detailedStatus(scalers: ScalerStatus[]): Status {
  const type = aggregate(scalers.map((s) => s.status.type));
  const message = scalers.map((s) => s.status.message?.trim() ?? '').filter((m) => m !== '').join(', ');
  return status(info(type, message), scalers);
}

/** `model.status` for an unknown app or one without any status message. */
export const NO_STATUS: Status = status(info('undeployed'));

/** What the list endpoints report before any status exists. */
export const WAITING: Status = status(info('waiting', 'Waiting for status: Lattice contains no hosts, deployment not started.'));

/** Published by the scaler manager after an undeploy (`scaler/manager.rs`). */
export const UNDEPLOYED: Status = status(info('undeployed', 'Manifest has been undeployed'));

export type Phase = 'reconciling' | 'deployed' | 'failed';

/** One scaler's status in a lattice with one host that is healthy (or has no eligible host). */
export function scalerStatus(s: ScalerInfo, phase: Phase): ScalerStatus {
  return { id: s.id, kind: s.kind, name: s.name, status: scalerInfo(s, phase) };
}

function scalerInfo(s: ScalerInfo, phase: Phase): StatusInfo {
  if (s.role === 'link') {
    // Links need no eligible host, so they settle even in a failing lattice.
    return phase === 'reconciling'
      ? info('reconciling', `Putting link definition between ${s.link?.source} and ${s.link?.target}`)
      : info('deployed');
  }
  const noun = s.role === 'component' ? 'component' : 'provider';
  const wanted = s.spreads.filter((sp) => sp.count > 0);
  if (phase === 'deployed' || wanted.length === 0) return info('deployed');
  if (phase === 'reconciling') return info('reconciling', `Scaling ${noun} on ${wanted.length} host(s)`);
  return info('failed', failureMessage(s));
}

function failureMessage(s: ScalerInfo): string {
  const daemon = s.kind === 'DaemonScaler';
  return s.spreads
    .filter((sp) => daemon || s.role === 'component' || sp.count > 0)
    .map((sp) => {
      if (daemon) return `Could not satisfy daemonscaler ${sp.name} for ${s.image}, 0 eligible hosts found.`;
      const of = s.role === 'component' ? 1 : sp.count;
      return `Could not satisfy spread ${sp.name} for ${s.image}, 0/${of} eligible hosts found.`;
    })
    .join(' ');
}
