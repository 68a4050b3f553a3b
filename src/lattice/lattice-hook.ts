// The WasmCloudLattice's sync hook: the parent in, what is known of its lattice gathered (the
// hosts heard, wadm's list through the census), the core's status out. No write, no child: the
// lattice is only described. A resync within the check period asks wadm nothing.
import type { Logger } from 'pino';
import { decideLattice, latticeCallOf, type LatticeCall } from '../core/lattice.js';
import type { HostsView } from '../core/lattice-hosts.js';
import type { WadmView } from '../core/lattice.js';
import type { Tenancy } from '../core/tenancy.js';
import { withinDeadline } from '../plumbing/deadline.js';
import type { LatticeHookRequest, LatticeHookResponse } from '../schema/hook.js';

export interface LatticeHookDeps {
  /** The hosts heard (lattice/hosts.ts HostRegistry). */
  hosts: { view(lattice: string): HostsView };
  /** wadm's list of the lattice and its owners (lattice/listings.ts LatticeListings). */
  listings: { view(lattice: string): Promise<WadmView> };
  tenancy: Tenancy;
  now: () => number;
  /** Time left for wadm requests in one hook call. */
  budgetMs: number;
  /** After every answer: the lattice it described (for metrics). */
  onAnswer?: (call: LatticeCall, response: LatticeHookResponse) => void;
}

/** The views of a call whose spec names no lattice: nothing was asked. */
const NOT_ASKED: HostsView = { watching: false, why: 'failed', message: 'not asked' };

export function createLatticeHook(deps: LatticeHookDeps) {
  /** `arrivedAt` (performance.now()): the budget counts from the call's arrival, as the sync hook's does. */
  async function answer(request: LatticeHookRequest, log: Logger, arrivedAt = performance.now()): Promise<LatticeHookResponse> {
    const call = latticeCallOf(request, deps.tenancy, deps.now());
    const { target } = call;
    const wadm = target.ok
      ? await withinDeadline(arrivedAt + deps.budgetMs, () => deps.listings.view(target.lattice))
      : ({ kind: 'unavailable', reason: 'BadReply', message: 'not asked' } as const);
    // The hosts as heard now, after wadm (which may take seconds): judged on the same clock.
    const hosts = target.ok ? deps.hosts.view(target.lattice) : NOT_ASKED;
    const { status, resyncAfterSeconds } = decideLattice({ ...call, now: deps.now() }, hosts, wadm);
    const response: LatticeHookResponse =
      resyncAfterSeconds === undefined ? { status, children: [] } : { status, children: [], resyncAfterSeconds };
    const previousReason = (call.previousStatus as { conditions?: { reason?: unknown }[] } | undefined)?.conditions?.[0]?.reason;
    const reason = status.conditions?.[0]?.reason;
    const fields = { lattice: status.lattice, hosts: status.hostCount, applications: status.applicationCount, reason };
    if (reason !== previousReason) log.info({ ...fields, previousReason }, status.message ?? '');
    else log.debug(fields, 'no change');
    deps.onAnswer?.(call, response);
    return response;
  }
  return { answer };
}

export type LatticeHook = ReturnType<typeof createLatticeHook>;
