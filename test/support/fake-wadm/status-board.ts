// The status side of wadm: the last status per (lattice, app) — what the `wadm_status` stream
// would hold — and the simulated hosts that make statuses appear after a deploy.
//
// Real wadm publishes nothing for a lattice without hosts: reconciliation (and so every status,
// the "undeployed" one included) starts only once a host heartbeat is seen (reference §6, §9).
import { scalersFor } from './scalers.js';
import { sortKeys } from './serialize.js';
import { UNDEPLOYED, detailedStatus, scalerStatus, type Phase } from './status.js';
import type { Manifest, Status } from './types.js';

export type HostBehaviour = 'healthy' | 'failing' | 'none';

export interface HostsOptions {
  behaviour: HostBehaviour;
  /** How long 'healthy' hosts take from `reconciling` to `deployed` (default 100 ms). */
  settleMs?: number;
}

const DEFAULT_SETTLE_MS = 100;

export class StatusBoard {
  private readonly last = new Map<string, Status>();
  private readonly hosts = new Map<string, Required<HostsOptions>>();
  private readonly timers = new Map<string, NodeJS.Timeout[]>();

  constructor(
    private readonly publish: (subject: string, payload: string) => void,
    private readonly deployedIn: (lattice: string) => Manifest[],
  ) {}

  get(lattice: string, name: string): Status | undefined {
    return this.last.get(key(lattice, name));
  }

  hostsOf(lattice: string): Required<HostsOptions> {
    return this.hosts.get(lattice) ?? { behaviour: 'none', settleMs: DEFAULT_SETTLE_MS };
  }

  /** Hosts joining (or changing) make wadm reconcile every deployed app of the lattice. */
  setHosts(lattice: string, options: HostsOptions): void {
    this.hosts.set(lattice, { settleMs: DEFAULT_SETTLE_MS, ...options });
    for (const manifest of this.deployedIn(lattice)) this.deployed(lattice, manifest);
  }

  /**
   * A status someone else published on the subject. wadm reads the stream, so it sees those too;
   * a payload that does not parse counts as no status, as in `get_manifest_status`.
   */
  observe(lattice: string, name: string, status: Status | undefined): void {
    if (status === undefined) this.last.delete(key(lattice, name));
    else this.last.set(key(lattice, name), status);
  }

  /** Publishes unconditionally: tests use it to inject any status. */
  inject(lattice: string, name: string, status: Status): void {
    this.last.set(key(lattice, name), status);
    this.publish(subject(lattice, name), JSON.stringify(status));
  }

  /** `StatusPublisher::publish_status`: skip when equal to the last message on the subject. */
  publishIfChanged(lattice: string, name: string, status: Status): void {
    const previous = this.get(lattice, name);
    if (previous !== undefined && same(previous, status)) return;
    this.inject(lattice, name, status);
  }

  deployed(lattice: string, manifest: Manifest): void {
    const name = manifest.metadata.name;
    this.cancel(lattice, name);
    const { behaviour, settleMs } = this.hostsOf(lattice);
    if (behaviour === 'none') return;
    const report = (phase: Phase): void => this.publishIfChanged(lattice, name, computed(manifest, phase));
    // The first report goes out at once (callers run this right after replying), so a later
    // request can never overtake it; only the settling is delayed.
    if (behaviour === 'failing') {
      report('failed');
      return;
    }
    report('reconciling');
    this.later(lattice, name, settleMs, () => report('deployed'));
  }

  undeployed(lattice: string, name: string): void {
    this.cancel(lattice, name);
    // Without hosts there is no scaler manager to publish; a status seen before (or injected) means there was one.
    if (this.hostsOf(lattice).behaviour === 'none' && this.get(lattice, name) === undefined) return;
    this.publishIfChanged(lattice, name, UNDEPLOYED);
  }

  clear(): void {
    for (const k of [...this.timers.keys()]) this.cancelKey(k);
    this.last.clear();
    this.hosts.clear();
  }

  private later(lattice: string, name: string, ms: number, run: () => void): void {
    const k = key(lattice, name);
    const timer = setTimeout(run, ms);
    this.timers.set(k, [...(this.timers.get(k) ?? []), timer]);
  }

  private cancel(lattice: string, name: string): void {
    this.cancelKey(key(lattice, name));
  }

  private cancelKey(k: string): void {
    for (const timer of this.timers.get(k) ?? []) clearTimeout(timer);
    this.timers.delete(k);
  }
}

function computed(manifest: Manifest, phase: Phase): Status {
  return detailedStatus(scalersFor(manifest).map((s) => scalerStatus(s, phase)));
}

function key(lattice: string, name: string): string {
  return `${lattice}\u0000${name}`;
}

export function statusSubject(lattice: string, name: string): string {
  return `wadm.status.${lattice}.${name}`;
}

const subject = statusSubject;

function same(a: Status, b: Status): boolean {
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
}
