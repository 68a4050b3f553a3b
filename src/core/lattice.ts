// The WasmCloudLattice's status, decided from (the hook call, what the shell knows of the lattice):
// its hosts from their heartbeats (lattice-hosts.ts), its applications from wadm's list, the
// namespaces the policy lets in. Pure: no I/O, the call carries the time; the same call and the
// same knowledge give byte-identical status, on every replica that heard the same heartbeats.
import { DEFAULT_MIN_HOSTS, LATTICE_LIMITS, LatticeSpecSchema, type LatticeApplication, type LatticeSpec } from '../schema/lattice.js';
import type { WasmCloudLatticeStatus } from '../schema/lattice.js';
import { compile } from '../schema/validator.js';
import type { LatticeHookRequest } from '../schema/hook.js';
import type { Tenancy } from './tenancy.js';
import { isWadmName } from './names.js';
import type { UnavailableReason } from './facts.js';
import {
  aliveHosts,
  describeLabels,
  expiresAt,
  hostLabels,
  hostsPerApplication,
  hostsShown,
  listeningUntil,
  matching,
  pairs,
  type HostFacts,
  type HostsView,
} from './lattice-hosts.js';
import { LATTICE_REASONS, type LatticeReason } from './lattice-reasons.js';
import { byCodeUnits } from './order.js';
import { kstatusConditions, normaliseStatus, truncate } from './status.js';

export type { HostFacts, HostsView };

/** One application as wadm's list summarises it. */
export interface ListedApplication {
  name: string;
  version: string;
  deployed: string | null;
  /** wadm's status type and message (`detailed_status`). */
  status?: string;
  message?: string;
}

/**
 * What the shell knows of the lattice's wadm: its list (with the owners read of the applications
 * shown, by name: null for none, absent when unknown), or why there is none.
 */
export type WadmView =
  | { kind: 'listed'; total: number; models: readonly ListedApplication[]; owners: ReadonlyMap<string, string | null> }
  | { kind: 'unlisted'; reason: UnavailableReason; message: string; tooLarge: boolean; reachable: boolean }
  | { kind: 'unavailable'; reason: UnavailableReason; message: string };

/** The lattice a resource names, and what Ready means for it; or why its spec is wrong. */
export type LatticeTarget =
  { ok: true; lattice: string; spec: LatticeSpec } | { ok: false; lattice: string | undefined; problems: string[] };

export interface LatticeCall {
  target: LatticeTarget;
  generation: number;
  /** Namespaces the lattice policy lets use the lattice. */
  namespaces: string[];
  /** The parent's status, possibly stale: only transition times are kept from it. */
  previousStatus: unknown;
  now: number;
}

export interface LatticeAnswer {
  status: WasmCloudLatticeStatus;
  resyncAfterSeconds?: number;
}

const checkSpec = compile<LatticeSpec>(LatticeSpecSchema);

export function latticeTargetOf(name: string, spec: unknown): LatticeTarget {
  const given = spec ?? {};
  const named = (given as { lattice?: unknown }).lattice;
  const lattice = typeof named === 'string' ? named : name;
  if (!checkSpec(given)) return { ok: false, lattice: undefined, problems: checkSpec.problems(given, 'spec') };
  if (!isWadmName(lattice))
    return {
      ok: false,
      lattice: undefined,
      problems: [`metadata.name "${name}" is not a lattice id (one NATS subject token): set spec.lattice`],
    };
  return { ok: true, lattice, spec: given };
}

/** The call as the hook receives it. */
export function latticeCallOf(request: LatticeHookRequest, tenancy: Tenancy, now: number): LatticeCall {
  const { metadata, spec, status } = request.parent;
  const target = latticeTargetOf(metadata.name, spec);
  const namespaces = target.ok ? (tenancy.namespacesFor?.(target.lattice) ?? []) : [];
  return { target, generation: metadata.generation ?? 0, namespaces, previousStatus: status, now };
}

/** The applications the status lists, by name: the shell reads the owners of these only. */
export function applicationsShown(models: readonly ListedApplication[]): ListedApplication[] {
  return [...models].sort((a, b) => byCodeUnits(a.name, b.name)).slice(0, LATTICE_LIMITS.applicationsShown);
}

export function decideLattice(call: LatticeCall, hosts: HostsView, wadm: WadmView): LatticeAnswer {
  const { target } = call;
  if (!target.ok) return answer(call, {}, 'InvalidLatticeSpec', `Invalid spec: ${target.problems.join('; ')}`);
  const alive = hosts.watching ? aliveHosts(hosts, call.now) : [];
  const status: WasmCloudLatticeStatus = { lattice: target.lattice, ...hostFields(alive), ...applicationFields(wadm, alive) };
  if (wadm.kind !== 'unavailable') status.wadmReachable = wadm.kind === 'listed' || wadm.reachable;
  status.namespaces = call.namespaces.slice(0, LATTICE_LIMITS.namespaces);
  const [reason, message] = verdict(call, target, hosts, alive, wadm);
  return answer(call, status, reason, message, resyncAfter(call.now, reason, hosts, alive));
}

function verdict(
  call: LatticeCall,
  target: Extract<LatticeTarget, { ok: true }>,
  hosts: HostsView,
  alive: HostFacts[],
  wadm: WadmView,
): [LatticeReason, string] {
  const { lattice } = target;
  if (!hosts.watching && hosts.why === 'refused')
    return ['NatsNotPermitted', `Cannot hear the hosts of lattice "${lattice}": ${hosts.message}`];
  if (wadm.kind !== 'listed' && wadm.reason === 'NotPermitted')
    return ['NatsNotPermitted', `Cannot ask wadm about lattice "${lattice}": ${wadm.message}`];
  const counted = hostsCounted(alive, hosts);
  if (!hosts.watching) return ['WadmUnavailable', `Cannot hear the hosts of lattice "${lattice}" (${hosts.message}); will retry`];
  if (wadm.kind === 'unavailable' || (wadm.kind === 'unlisted' && !wadm.reachable))
    return ['WadmUnavailable', `wadm of lattice "${lattice}" does not answer (${wadm.reason}): ${wadm.message}; ${counted}; will retry`];
  // Within the first heartbeat period not every host was heard yet: what is missing may only be
  // unheard, but what was heard and suffices is Ready (a restarted replica does not flip Ready).
  const until = listeningUntil(hosts);
  const listening = call.now < until ? ` (listening until ${iso(until)}: more may yet be heard)` : '';
  const missing = missingHosts(target.spec, alive);
  if (missing !== undefined && listening !== '')
    return ['ListeningForHosts', `Listening to the heartbeats of lattice "${lattice}" until ${iso(until)}: ${counted} so far; ${missing}`];
  if (missing !== undefined) return ['HostsMissing', `${missing}; ${counted}`];
  const apps = wadm.kind === 'listed' ? `${wadm.total} application${wadm.total === 1 ? '' : 's'}` : 'applications as the hosts run them';
  return ['LatticeReady', `${counted}${listening}, ${apps}; wadm answers`];
}

/** What the spec asks that the hosts alive do not give, for the message; undefined when all is there. */
export function missingHosts(spec: LatticeSpec, alive: readonly HostFacts[]): string | undefined {
  const minHosts = spec.minHosts ?? DEFAULT_MIN_HOSTS;
  if (alive.length < minHosts)
    return `${minHosts} host${minHosts === 1 ? '' : 's'} needed (spec.minHosts${spec.minHosts === undefined ? ' default' : ''})`;
  for (const [index, required] of (spec.requiredHosts ?? []).entries()) {
    const count = required.count ?? 1;
    const found = matching(alive, required.labels);
    if (found < count) {
      const have = describeLabels(hostLabels(alive), alive);
      return `spec.requiredHosts[${index}] needs ${count} host${count === 1 ? '' : 's'} with ${pairs(required.labels)}, ${found} heartbeat${have === '' ? '' : ` (the hosts have ${have})`}`;
    }
  }
  return undefined;
}

function hostsCounted(alive: readonly HostFacts[], hosts: HostsView): string {
  const counted = `${alive.length} host${alive.length === 1 ? '' : 's'} heartbeating`;
  return hosts.watching && hosts.untracked ? `${counted} (more heartbeat than the service keeps track of)` : counted;
}

function hostFields(alive: readonly HostFacts[]): Partial<WasmCloudLatticeStatus> {
  const shown = hostsShown(alive);
  const fields: Partial<WasmCloudLatticeStatus> = { hostCount: alive.length, hosts: shown };
  if (alive.length > shown.length) fields.hostsOmitted = alive.length - shown.length;
  fields.hostLabels = hostLabels(alive);
  return fields;
}

/** From wadm's list when it could be read; from the hosts' heartbeats when it could not. */
function applicationFields(wadm: WadmView, alive: readonly HostFacts[]): Partial<WasmCloudLatticeStatus> {
  const running = hostsPerApplication(alive);
  if (wadm.kind === 'listed') {
    const applications = applicationsShown(wadm.models).map((model) => listed(model, wadm.owners, running));
    return withOmitted({ applicationCount: wadm.total, applications, applicationsFrom: 'Wadm' }, wadm.total);
  }
  if (wadm.kind === 'unavailable') return {};
  const names = [...running.keys()].sort(byCodeUnits);
  const applications = names.slice(0, LATTICE_LIMITS.applicationsShown).map((name) => ({ name: cut(name), hosts: running.get(name)! }));
  return withOmitted({ applicationCount: names.length, applications, applicationsFrom: 'Heartbeats' }, names.length);
}

function withOmitted(fields: Partial<WasmCloudLatticeStatus>, total: number): Partial<WasmCloudLatticeStatus> {
  const shown = fields.applications?.length ?? 0;
  return total > shown ? { ...fields, applicationsOmitted: total - shown } : fields;
}

function listed(model: ListedApplication, owners: ReadonlyMap<string, string | null>, running: Map<string, number>): LatticeApplication {
  const entry: LatticeApplication = { name: cut(model.name) };
  if (model.version !== '') entry.version = cut(model.version);
  if (model.deployed !== null) entry.deployedVersion = cut(model.deployed);
  if (model.status !== undefined) {
    entry.status = normaliseStatus(model.status);
    if (entry.status !== 'Deployed' && model.message) entry.message = cut(model.message);
  }
  const owner = owners.get(model.name);
  if (owner === null) entry.unowned = true;
  else if (owner !== undefined) entry.owner = cut(owner);
  entry.hosts = running.get(model.name) ?? 0;
  return entry;
}

function answer(
  call: LatticeCall,
  fields: Partial<WasmCloudLatticeStatus>,
  reason: LatticeReason,
  text: string,
  resyncAfterSeconds?: number,
): LatticeAnswer {
  const message = truncate(text);
  const info = LATTICE_REASONS[reason];
  const conditions = kstatusConditions(
    { previous: call.previousStatus, generation: call.generation, now: call.now },
    { reason, message, ...info },
  );
  const status: WasmCloudLatticeStatus = { observedGeneration: call.generation, ...fields, message, conditions };
  return resyncAfterSeconds === undefined ? { status } : { status, resyncAfterSeconds };
}

/**
 * When to look again: as the listening ends, or as the first host alive would be lost without another
 * heartbeat (each heartbeat moves that on, so a settled lattice is looked at about once a period),
 * soon while wadm does not answer. Without hosts, the controller's resyncPeriodSeconds looks again.
 */
function resyncAfter(now: number, reason: LatticeReason, hosts: HostsView, alive: readonly HostFacts[]): number | undefined {
  if (reason === 'WadmUnavailable') return 10;
  if (reason === 'NatsNotPermitted' || !hosts.watching) return 300;
  const listenedUntil = listeningUntil(hosts);
  const moments = [...alive.map((host) => expiresAt(host, hosts.defaultPeriodMs)), ...(now < listenedUntil ? [listenedUntil] : [])];
  return moments.length === 0 ? undefined : seconds(Math.min(...moments) - now);
}

/** Whole seconds, at least one, rounded up past the moment (Metacontroller takes a float, our tests read whole ones). */
function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000) + 1);
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function cut(text: string): string {
  return text.length <= LATTICE_LIMITS.text ? text : `${text.slice(0, LATTICE_LIMITS.text - 1)}…`;
}
