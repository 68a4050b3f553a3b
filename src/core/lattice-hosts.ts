// What the heartbeats heard tell of a lattice's hosts: which are alive, what labels they have, what
// runs where. Pure: the shell (lattice/hosts.ts) hears the heartbeats and hands them over as
// facts; here is decided what they mean, on the call's clock.
import { LATTICE_LIMITS, type HostLabel, type LatticeHost } from '../schema/lattice.js';
import { byCodeUnits } from './order.js';

/** One host as its heartbeats told it, and when this replica heard them. */
export interface HostFacts {
  id: string;
  friendlyName: string;
  /** At most LATTICE_LIMITS.labelsPerHost, by key; `labelsOmitted` counts the rest. */
  labels: Readonly<Record<string, string>>;
  labelsOmitted: number;
  version: string;
  uptimeSeconds: number;
  /** The time the host put in its heartbeat (its CloudEvent `time`): every replica hears the same one. */
  sentAt: string;
  /** When this replica heard its last heartbeat (or its start), on the shell's clock. */
  heardAt: number;
  /** The time between its last two heartbeats, as heard; undefined until two were heard. */
  periodMs: number | undefined;
  components: number;
  providers: number;
  /** Applications (wadm's `wasmcloud.dev/appspec` annotation) whose components or providers the host runs. */
  applications: readonly string[];
}

/**
 * What the shell knows of a lattice's hosts: those heard since it subscribed to their heartbeats
 * (`since`), or why it does not hear them. `untracked`: more hosts heartbeat than the shell keeps.
 */
export type HostsView =
  | { watching: true; since: number; hosts: readonly HostFacts[]; untracked: boolean; defaultPeriodMs: number }
  | { watching: false; why: 'refused' | 'failed' | 'disconnected'; message: string };

/** How often wasmCloud 1.x hosts heartbeat (its DEFAULT_HEARTBEAT_INTERVAL), until two heartbeats of a host say otherwise. */
export const DEFAULT_HEARTBEAT_MS = 30_000;

/**
 * A host is lost once it missed its heartbeat for half a period more: with a resync at that moment,
 * its loss shows within two heartbeat periods (real hosts beat every 30 s).
 */
export const MISSED_PERIODS = 1.5;

/** When the host counts as lost unless it heartbeats again. */
export function expiresAt(host: HostFacts, defaultPeriodMs: number): number {
  return host.heardAt + Math.ceil(MISSED_PERIODS * (host.periodMs ?? defaultPeriodMs));
}

/** The hosts not lost at `now`. */
export function aliveHosts(view: Extract<HostsView, { watching: true }>, now: number): HostFacts[] {
  return view.hosts.filter((host) => expiresAt(host, view.defaultPeriodMs) > now);
}

/** Until when the hosts heard may not be all: one heartbeat period after subscribing. */
export function listeningUntil(view: Extract<HostsView, { watching: true }>): number {
  return view.since + view.defaultPeriodMs;
}

/** The hosts as the status shows them: by friendly name then id, at most hostsShown. */
export function hostsShown(hosts: readonly HostFacts[]): LatticeHost[] {
  return [...hosts]
    .sort((a, b) => byCodeUnits(a.friendlyName, b.friendlyName) || byCodeUnits(a.id, b.id))
    .slice(0, LATTICE_LIMITS.hostsShown)
    .map((host) => ({
      id: host.id,
      friendlyName: host.friendlyName,
      labels: { ...host.labels },
      ...(host.labelsOmitted > 0 ? { labelsOmitted: host.labelsOmitted } : {}),
      version: host.version,
      uptimeSeconds: host.uptimeSeconds,
      lastHeartbeat: host.sentAt,
      components: host.components,
      providers: host.providers,
    }));
}

/** Every label key of the hosts, with its values (sorted) and how many hosts have it. */
export function hostLabels(hosts: readonly HostFacts[]): HostLabel[] {
  const byKey = new Map<string, { values: Set<string>; hosts: number }>();
  for (const host of hosts)
    for (const [key, value] of Object.entries(host.labels)) {
      const entry = byKey.get(key) ?? { values: new Set<string>(), hosts: 0 };
      entry.values.add(value);
      entry.hosts += 1;
      byKey.set(key, entry);
    }
  return [...byKey]
    .sort(([a], [b]) => byCodeUnits(a, b))
    .slice(0, LATTICE_LIMITS.labelKeys)
    .map(([key, { values, hosts: count }]) => ({
      key,
      values: [...values].sort(byCodeUnits).slice(0, LATTICE_LIMITS.valuesPerLabel),
      hosts: count,
    }));
}

/** How many hosts run something of each application, by name. */
export function hostsPerApplication(hosts: readonly HostFacts[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const host of hosts) for (const app of host.applications) counts.set(app, (counts.get(app) ?? 0) + 1);
  return counts;
}

/** Hosts that have every one of these labels with these values. */
export function matching(hosts: readonly HostFacts[], labels: Readonly<Record<string, string>>): number {
  const wanted = Object.entries(labels);
  return hosts.filter((host) => wanted.every(([key, value]) => Object.hasOwn(host.labels, key) && host.labels[key] === value)).length;
}

/** `zone=eu (2 hosts), zone=us (1 host), hostcore.os=linux (3 hosts)`: the labels hosts have, for a message. */
export function describeLabels(labels: readonly HostLabel[], hosts: readonly HostFacts[], limit = 12): string {
  const pairs = labels.flatMap(({ key, values }) =>
    values.map((value) => ({ pair: `${key}=${value}`, count: matching(hosts, { [key]: value }) })),
  );
  const shown = pairs.slice(0, limit).map(({ pair, count }) => `${pair} (${count} host${count === 1 ? '' : 's'})`);
  return pairs.length > limit ? `${shown.join(', ')} and ${pairs.length - limit} more` : shown.join(', ');
}

/** A label pair for a message: `zone=eu, tier=gpu`. */
export function pairs(labels: Readonly<Record<string, string>>): string {
  return Object.entries(labels)
    .sort(([a], [b]) => byCodeUnits(a, b))
    .map(([key, value]) => `${key}=${value}`)
    .join(', ');
}
