// The hosts of each lattice, as their own events tell them: one NATS subscription per lattice and
// event (`wasmbus.evt.{lattice}.host_heartbeat`, `host_started`, `host_stopped`), and no request at
// all. A lattice is subscribed the first time a WasmCloudLattice's hook call asks about its hosts
// (an application whose placement failed only peeks at what is heard), again on a new connection,
// and dropped once nobody asked for idleMs. Memory is bounded per lattice (maxHosts hosts of at most
// LATTICE_LIMITS.labelsPerHost labels, their text cut) and in lattices (maxLattices). A subscription
// NATS refuses ends with a warning and a count, never with the process: the lattice then reports
// it, and is subscribed again after retryFailedMs. What the hosts mean is decided by the core
// (core/lattice-hosts.ts); here they are only heard.
import type { Static } from '@sinclair/typebox';
import type { Msg, NatsConnection, Subscription } from 'nats';
import type { Logger } from 'pino';
import type { HostFacts, HostsView } from '../core/lattice-hosts.js';
import { byCodeUnits } from '../core/order.js';
import { LATTICE_LIMITS } from '../schema/lattice.js';
import { compile } from '../schema/validator.js';
import { hostEventSubject, HOST_EVENTS, type HostEvent } from './subjects.js';
import { HostEventSchema, HeartbeatSchema, HostStartedSchema, type HostEventEnvelope } from './wire.js';

export interface HostRegistryOptions {
  now: () => number;
  /** How often hosts heartbeat until two heartbeats of a host say otherwise (30 s for wasmCloud 1.x). */
  defaultPeriodMs: number;
  /** A lattice nobody asked about for this long is unsubscribed and forgotten. */
  idleMs: number;
  /** A lattice whose subscription failed is subscribed again after this long. */
  retryFailedMs: number;
  maxHostsPerLattice: number;
  maxLattices: number;
  /** A subscription ended with an error: `denied` when NATS refused it (permissions). */
  onFailure?: (lattice: string, denied: boolean) => void;
}

interface Heard {
  on: NatsConnection;
  subscriptions: Subscription[];
  since: number;
  usedAt: number;
  hosts: Map<string, HostFacts>;
  untracked: boolean;
}

const APPSPEC = 'wasmcloud.dev/appspec';
/** A host not heard for this many periods is forgotten (the core calls it lost after 1.5). */
const FORGET_AFTER_PERIODS = 3;
const checkEnvelope = compile<HostEventEnvelope>(HostEventSchema);
const checkHeartbeat = compile<Static<typeof HeartbeatSchema>>(HeartbeatSchema);
const checkStarted = compile<Static<typeof HostStartedSchema>>(HostStartedSchema);

export class HostRegistry {
  private readonly lattices = new Map<string, Heard>();
  private readonly failed = new Map<string, { at: number; denied: boolean; message: string }>();
  /** Hosts heard announce their start and no heartbeat since: the time to their first one says nothing of their period. */
  private readonly startedOnly = new WeakSet<HostFacts>();

  constructor(
    private readonly connection: () => NatsConnection | undefined,
    private readonly logger: Logger,
    private readonly options: HostRegistryOptions,
  ) {}

  /** What is known of the lattice's hosts; subscribes to their events first if nobody did yet. */
  view(lattice: string): HostsView {
    const now = this.options.now();
    this.sweep(now);
    const nc = this.connection();
    if (!nc) return { watching: false, why: 'disconnected', message: 'not connected to NATS' };
    const failed = this.failed.get(lattice);
    if (failed && now - failed.at < this.options.retryFailedMs)
      return { watching: false, why: failed.denied ? 'refused' : 'failed', message: failed.message };
    let heard = this.lattices.get(lattice);
    if (!heard || heard.on !== nc) heard = this.subscribe(lattice, nc, now, heard);
    heard.usedAt = now;
    return this.viewOf(heard, now);
  }

  /**
   * What is known of the lattice's hosts if someone listens to them already, without subscribing
   * nor counting as a use: an application's failed placement reads it, but only a WasmCloudLattice
   * makes the service listen (and so need the heartbeat subjects).
   */
  peek(lattice: string): HostsView | undefined {
    const heard = this.lattices.get(lattice);
    if (!heard || heard.on !== this.connection()) return undefined;
    return this.viewOf(heard, this.options.now());
  }

  private viewOf(heard: Heard, now: number): HostsView {
    this.forgetSilent(heard, now);
    const { since, untracked } = heard;
    return { watching: true, since, hosts: [...heard.hosts.values()], untracked, defaultPeriodMs: this.options.defaultPeriodMs };
  }

  /** The hosts heard per lattice subscribed now, not counting as a use (for /metrics). */
  counts(): Map<string, HostFacts[]> {
    return new Map([...this.lattices].map(([lattice, heard]) => [lattice, [...heard.hosts.values()]]));
  }

  /** A new connection: every lattice is subscribed on it, keeping the hosts heard (they expire unless heard again). */
  resubscribe(): void {
    const nc = this.connection();
    if (!nc) return;
    for (const [lattice, heard] of this.lattices) if (heard.on !== nc) this.subscribe(lattice, nc, heard.since, heard);
  }

  private subscribe(lattice: string, nc: NatsConnection, now: number, before: Heard | undefined): Heard {
    if (before) this.drop(before);
    if (!before && this.lattices.size >= this.options.maxLattices) this.evictLeastUsed();
    this.failed.delete(lattice);
    const heard: Heard = {
      on: nc,
      subscriptions: [],
      since: before?.since ?? now,
      usedAt: now,
      hosts: before?.hosts ?? new Map(),
      untracked: false,
    };
    for (const event of HOST_EVENTS) {
      const subscription = nc.subscribe(hostEventSubject(lattice, event));
      heard.subscriptions.push(subscription);
      this.consume(lattice, event, heard, subscription).catch((err: unknown) => this.failedWith(lattice, subscription, err));
    }
    this.lattices.set(lattice, heard);
    return heard;
  }

  private async consume(lattice: string, event: HostEvent, heard: Heard, subscription: Subscription): Promise<void> {
    for await (const msg of subscription) {
      try {
        this.receive(heard, event, msg);
      } catch (err) {
        this.logger.warn({ lattice, subject: msg.subject, err: (err as Error).message }, 'ignoring a malformed host event');
      }
    }
  }

  private receive(heard: Heard, event: HostEvent, msg: Msg): void {
    const envelope: unknown = JSON.parse(msg.string());
    if (!checkEnvelope(envelope)) throw new Error(checkEnvelope.problems(envelope, 'event').join('; '));
    const id = envelope.source;
    if (event === 'host_stopped') return void heard.hosts.delete(id);
    const now = this.options.now();
    const before = heard.hosts.get(id);
    if (!before && heard.hosts.size >= this.options.maxHostsPerLattice) {
      this.forgetSilent(heard, now);
      if (heard.hosts.size >= this.options.maxHostsPerLattice) return void (heard.untracked = true);
    }
    const sentAt = secondsOf(envelope.time) ?? secondsOf(new Date(now).toISOString())!;
    const data = envelope.data;
    if (event === 'host_started') {
      if (!checkStarted(data)) throw new Error(checkStarted.problems(data, 'data').join('; '));
      const { friendly_name, labels, version = '', uptime_seconds = 0 } = data;
      const started = facts(id, friendly_name, labels, version, uptime_seconds, sentAt, now, undefined, [], []);
      this.startedOnly.add(started);
      return void heard.hosts.set(id, started);
    }
    if (!checkHeartbeat(data)) throw new Error(checkHeartbeat.problems(data, 'data').join('; '));
    const { friendly_name, labels, version, uptime_seconds, components, providers } = data;
    // The period is what two heartbeats tell; a start announced before the first one says nothing of it.
    const periodMs = before && !this.startedOnly.has(before) ? clampPeriod(now - before.heardAt) : undefined;
    heard.hosts.set(id, facts(id, friendly_name, labels, version, uptime_seconds, sentAt, now, periodMs, components, providers));
  }

  /**
   * A subscription ended with an error: the lattice's subscriptions are dropped (the hosts heard
   * with them), and it is not subscribed again for retryFailedMs. Each refused subject is logged.
   */
  private failedWith(lattice: string, subscription: Subscription, err: unknown): void {
    const heard = this.lattices.get(lattice);
    const denied = (err as { code?: unknown }).code === 'PERMISSIONS_VIOLATION';
    const subject = subscription.getSubject();
    const message = denied
      ? `NATS refused this service's user to subscribe to "${subject}" (permissions violation); grant it subscribe on ${HOST_EVENTS.map((e) => `"${hostEventSubject(lattice, e)}"`).join(', ')} (see SECURITY.md)`
      : `the subscription to ${subject} failed: ${err instanceof Error ? err.message : String(err)}`;
    if (heard?.subscriptions.includes(subscription)) {
      this.drop(heard);
      this.lattices.delete(lattice);
      if (this.failed.size >= this.options.maxLattices) this.failed.clear();
      this.failed.set(lattice, { at: this.options.now(), denied, message });
    }
    this.logger.warn({ lattice, subject, retryInSeconds: this.options.retryFailedMs / 1000 }, message);
    this.options.onFailure?.(lattice, denied);
  }

  private forgetSilent(heard: Heard, now: number): void {
    for (const [id, host] of heard.hosts)
      if (now - host.heardAt > FORGET_AFTER_PERIODS * (host.periodMs ?? this.options.defaultPeriodMs)) heard.hosts.delete(id);
    if (heard.hosts.size < this.options.maxHostsPerLattice) heard.untracked = false;
  }

  /** Lattices nobody asked about for idleMs are unsubscribed and forgotten. */
  private sweep(now: number): void {
    for (const [lattice, heard] of this.lattices)
      if (now - heard.usedAt >= this.options.idleMs) {
        this.drop(heard);
        this.lattices.delete(lattice);
      }
  }

  private evictLeastUsed(): void {
    const [lattice, heard] = [...this.lattices].reduce((a, b) => (b[1].usedAt < a[1].usedAt ? b : a));
    this.drop(heard);
    this.lattices.delete(lattice);
  }

  private drop(heard: Heard): void {
    for (const subscription of heard.subscriptions) if (!subscription.isClosed()) subscription.unsubscribe();
  }
}

function facts(
  id: string,
  friendlyName: string,
  labels: Record<string, string>,
  version: string,
  uptimeSeconds: number,
  sentAt: string,
  heardAt: number,
  periodMs: number | undefined,
  components: { annotations?: Record<string, string> }[],
  providers: { annotations?: Record<string, string> }[],
): HostFacts {
  const keys = Object.keys(labels).sort(byCodeUnits);
  const kept = keys.slice(0, LATTICE_LIMITS.labelsPerHost);
  const applications = new Set<string>();
  for (const running of [...components, ...providers]) {
    const app = running.annotations?.[APPSPEC];
    if (app !== undefined && applications.size < LATTICE_LIMITS.applicationsShown) applications.add(cut(app));
  }
  return {
    id: cut(id),
    friendlyName: cut(friendlyName),
    labels: Object.fromEntries(kept.map((key) => [cut(key), cut(labels[key]!)])),
    labelsOmitted: keys.length - kept.length,
    version: cut(version),
    uptimeSeconds,
    sentAt,
    heardAt,
    periodMs,
    components: components.length,
    providers: providers.length,
    applications: [...applications].sort(byCodeUnits),
  };
}

/** A heartbeat period heard: at least a second, at most ten minutes (a host that was silent longer was lost). */
function clampPeriod(ms: number): number {
  return Math.min(600_000, Math.max(1000, ms));
}

/** An RFC 3339 time to whole seconds (`2026-02-04T19:05:35Z`), as status times are written; undefined if it is none. */
function secondsOf(time: string | undefined): string | undefined {
  const ms = time === undefined ? Number.NaN : Date.parse(time);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function cut(text: string): string {
  return text.length <= LATTICE_LIMITS.text ? text : `${text.slice(0, LATTICE_LIMITS.text - 1)}…`;
}
