// wadm's status as Knowledge keeps it: only what a verdict reads, in as few objects as possible,
// since one is kept per application.
import type { LatticeStatus } from '../core/facts.js';

/**
 * Only what a status verdict reads: thousands of these are kept (scaler ids are 64-char hashes).
 * Object literals of fixed shape (one hidden class for all), a status without message shared
 * per type, and scaler kinds interned: four of these objects and two kind strings per application
 * otherwise.
 */
export function lean(status: LatticeStatus): LatticeStatus {
  const scalers = status.scalers?.map(leanScaler);
  return scalers && scalers.length > 0 ? { status: info(status.status), scalers } : { status: info(status.status) };
}

type Scaler = NonNullable<LatticeStatus['scalers']>[number];

function leanScaler({ kind, name, status }: Scaler): Scaler {
  if (kind !== undefined && name !== undefined) return { kind: interned(kind), name, status: info(status) };
  if (kind !== undefined) return { kind: interned(kind), status: info(status) };
  if (name !== undefined) return { name, status: info(status) };
  return { status: info(status) };
}

/** Never mutated (nothing remembered is): one object per status type serves every application. */
const WITHOUT_MESSAGE = new Map<string, LatticeStatus['status']>();

function info({ type, message }: LatticeStatus['status']): LatticeStatus['status'] {
  if (message) return { type, message };
  let shared = WITHOUT_MESSAGE.get(type);
  if (!shared && WITHOUT_MESSAGE.size < 64) WITHOUT_MESSAGE.set(type, (shared = { type }));
  return shared ?? { type };
}

const KINDS = new Map<string, string>();

/** wadm's few scaler kinds, one string each rather than one per parsed status. */
function interned(kind: string): string {
  const known = KINDS.get(kind);
  if (known !== undefined) return known;
  if (KINDS.size < 64) KINDS.set(kind, kind);
  return kind;
}
