// A wasmCloud 1.x lattice host simulator for tests: hosts that a real wadm 0.21.1 can drive to `deployed`
// (lattice-host-protocol.md). Each host subscribes to its control subjects, announces itself (host_started,
// host_heartbeat, host_stopped) and answers wadm's requests (./host-sim/handlers.ts); components and providers
// "start" instantly and nothing is pulled. What wadm made the hosts run can be read back through the views.
import { closeConnection } from '../../src/lattice/connection.js';
import { connect, nkeys, type NatsConnection, type Subscription } from 'nats';
import { EventPacer, type PublishedEvent } from './host-sim/events.js';
import { handle, type Context, type CtlRequest, type HostState, type LatticeData, type Link, type StringMap } from './host-sim/handlers.js';
import { untilWadmWatches } from './host-sim/wadm-ready.js';

export { WADM_STALL_TOLERANT_MS } from './host-sim/wadm-ready.js';
export type { CtlRequest, Link, PublishedEvent, StringMap };

export interface LatticeOptions {
  servers: string | string[];
  /** One subject token (wadm parses `wasmbus.evt.{lattice}.{type}`). Default `default`. */
  lattice?: string;
  /** Labels of each host, added to the `hostcore.*` ones every real host has; spread requirements match them. */
  hosts?: { labels?: StringMap }[];
  /** Real hosts beat every 30 s; tests want wadm to re-check often. Default 1000 ms. */
  heartbeatMs?: number;
  /** Wait, before any host announces itself, until a real wadm watches the lattice (see wadm-ready.ts). */
  waitForWadm?: boolean;
}

export interface HostInfo {
  id: string;
  friendlyName: string;
  labels: StringMap;
}

/** Must parse as semver, or wadm drops every heartbeat without a warning. */
const HOST_VERSION = '1.9.2';
const BUILTIN_LABELS = { 'hostcore.arch': 'x86_64', 'hostcore.os': 'linux', 'hostcore.osfamily': 'unix' };
/** The least time between two events of the lattice (see events.ts). */
const EVENT_SPACING_MS = 25;

export async function startLattice(options: LatticeOptions): Promise<SimulatedLattice> {
  const nc = await connect({ servers: options.servers, name: 'wasmcloud-host-sim' });
  const name = options.lattice ?? 'default';
  const lattice = new SimulatedLattice(nc, name, options.heartbeatMs ?? 1000);
  try {
    if (options.waitForWadm) await untilWadmWatches(nc, name);
    for (const spec of options.hosts ?? [{}]) await lattice.addHost(spec);
  } catch (err) {
    await lattice.stop();
    throw err;
  }
  return lattice;
}

interface SimHost {
  state: HostState & { startedAt: number };
  subscriptions: Subscription[];
}

export class SimulatedLattice {
  private readonly live = new Map<string, SimHost>();
  private readonly data: LatticeData = { links: new Map(), config: new Map(), requests: [] };
  private readonly pacer: EventPacer;
  private readonly timer: NodeJS.Timeout;
  private hostCount = 0;
  private reconnects = 0;
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly nc: NatsConnection,
    readonly lattice: string,
    heartbeatMs: number,
  ) {
    this.pacer = new EventPacer(nc, lattice, EVENT_SPACING_MS);
    this.timer = setInterval(() => this.beat(), heartbeatMs);
    this.timer.unref();
    void (async () => {
      for await (const status of nc.status()) if (status.type === 'reconnect') this.reconnects++;
    })();
  }

  /** How often the connection came back after losing its server (nats.js reconnects by itself). */
  get reconnectCount(): number {
    return this.reconnects;
  }

  /** The running hosts. */
  get hosts(): HostInfo[] {
    return [...this.live.values()].map(({ state }) => ({ id: state.id, friendlyName: state.friendlyName, labels: { ...state.labels } }));
  }

  /** Subscribes, then announces the host: wadm may command it as soon as it hears of it. */
  async addHost({ labels = {} }: { labels?: StringMap } = {}): Promise<HostInfo> {
    const state = {
      id: nkeys.createServer().getPublicKey(),
      friendlyName: `sim-host-${++this.hostCount}`,
      labels: { ...BUILTIN_LABELS, ...labels },
      components: new Map(),
      providers: new Map(),
      startedAt: Date.now(),
    };
    const host: SimHost = { state, subscriptions: [] };
    const ctx: Context = { data: this.data, host: state, emit: (type, data) => this.pacer.publish(state.id, type, data) };
    const prefix = `wasmbus.ctl.v1.${this.lattice}`;
    const listen = (subject: string, queue?: string) =>
      host.subscriptions.push(
        this.nc.subscribe(`${prefix}.${subject}`, {
          ...(queue ? { queue: `${prefix}.${queue}` } : {}),
          callback: (err, msg) => void (err || handle(ctx, msg.subject.slice(prefix.length + 1), msg)),
        }),
      );
    listen(`component.*.${state.id}`);
    listen(`provider.*.${state.id}`);
    // Lattice-wide data: one answer per request, from whichever host the queue group picks.
    listen('link.*', 'link');
    listen('claims.get', 'claims');
    listen('config.>', 'config');
    this.live.set(state.id, host);
    await this.nc.flush();
    ctx.emit('host_started', { friendly_name: state.friendlyName, labels: state.labels, uptime_seconds: 0, version: HOST_VERSION });
    this.heartbeat(host);
    return this.hosts.find((h) => h.id === state.id)!;
  }

  /** A graceful stop: wadm forgets the host and everything on it as soon as it sees `host_stopped`. */
  async stopHost(id: string): Promise<void> {
    const host = this.live.get(id);
    if (!host) throw new Error(`no running simulated host ${id}`);
    this.live.delete(id);
    for (const sub of host.subscriptions) sub.unsubscribe();
    this.pacer.publish(id, 'host_stopped', { labels: host.state.labels });
    await this.pacer.flushed();
  }

  /**
   * A host that dies without a word (a crash, a lost node): no `host_stopped`, its heartbeats just
   * stop. wadm keeps it until its reaper drops it (70–105 s); the service's lattice view, after 1.5 periods.
   */
  crashHost(id: string): void {
    const host = this.live.get(id);
    if (!host) throw new Error(`no running simulated host ${id}`);
    this.live.delete(id);
    for (const sub of host.subscriptions) sub.unsubscribe();
  }

  /** Heartbeats from every host now, instead of waiting for the next tick. */
  async heartbeatNow(): Promise<void> {
    this.beat();
    await this.pacer.flushed();
  }

  components() {
    return this.running().flatMap(({ id, components }) =>
      [...components].map(([name, c]) => ({ hostId: id, id: name, ...structuredClone(c) })),
    );
  }

  providers() {
    return this.running().flatMap(({ id, providers }) =>
      [...providers].map(([name, p]) => ({ hostId: id, id: name, ...structuredClone(p) })),
    );
  }

  links(): Link[] {
    return structuredClone([...this.data.links.values()]);
  }

  config(): Record<string, StringMap> {
    return structuredClone(Object.fromEntries(this.data.config));
  }

  /** Every control request received so far, in order. */
  requests(): CtlRequest[] {
    return [...this.data.requests];
  }

  /** Every event published so far, in order. */
  events(): PublishedEvent[] {
    return [...this.pacer.published];
  }

  /** Stops every host (so wadm forgets them at once) and drains the connection. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      clearInterval(this.timer);
      for (const id of [...this.live.keys()]) await this.stopHost(id).catch(() => undefined);
      await closeConnection(this.nc);
    })();
    return this.stopping;
  }

  private running(): HostState[] {
    return [...this.live.values()].map(({ state }) => state);
  }

  private beat(): void {
    for (const host of this.live.values()) this.heartbeat(host);
  }

  /** The `HostInventory` wadm rebuilds its view of the host from (§3.1), with the annotations it sent echoed back. */
  private heartbeat({ state }: SimHost): void {
    const uptime = Math.floor((Date.now() - state.startedAt) / 1000);
    this.pacer.publish(state.id, 'host_heartbeat', {
      components: [...state.components].map(([id, c]) => ({
        id,
        image_ref: c.imageRef,
        annotations: c.annotations,
        revision: 0,
        max_instances: c.maxInstances,
      })),
      providers: [...state.providers].map(([id, p]) => ({ id, image_ref: p.imageRef, annotations: p.annotations, revision: 0 })),
      host_id: state.id,
      friendly_name: state.friendlyName,
      labels: state.labels,
      version: HOST_VERSION,
      uptime_human: `${uptime}s`,
      uptime_seconds: uptime,
    });
  }
}
