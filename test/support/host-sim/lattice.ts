// A lattice of simulated hosts on one NATS connection: starting and stopping hosts, the
// heartbeat clock, fault switches, and read-only views of what wadm made the hosts run.
import { connect, nkeys, type NatsConnection } from 'nats';
import { EventPacer } from './event-pacer.js';
import { BUILTIN_LABELS } from './inventory.js';
import { SimHost } from './sim-host.js';
import { HostState, LatticeState } from './state.js';
import { untilWadmWatches } from './wadm-ready.js';
import type { CtlRequest, HostInfo, HostSpec, Link, PublishedEvent, RunningComponent, RunningProvider, StringMap } from './types.js';

export interface LatticeOptions {
  servers: string | string[];
  /** One subject token (wadm parses `wasmbus.evt.{lattice}.{type}`). Default `default`. */
  lattice?: string;
  hosts?: HostSpec[];
  /** Real hosts beat every 30 s; tests want wadm to re-check often. Default 1000 ms. */
  heartbeatMs?: number;
  /** The least time between two events of the lattice (see event-pacer.ts). Default 25 ms. */
  eventSpacingMs?: number;
  /**
   * Wait, before any host announces itself, until a real wadm watches the lattice (see
   * wadm-ready.ts for why). Leave it off when no wadm runs. Default false.
   */
  waitForWadm?: boolean;
  /** Images whose `component.scale` ends in `component_scale_failed` (see `failScales`). */
  failScales?: string[];
  /** Images whose `provider.start` ends in `provider_start_failed` (see `failStarts`). */
  failStarts?: string[];
}

export async function startLattice(options: LatticeOptions): Promise<SimulatedLattice> {
  const nc = await connect({ servers: options.servers, name: 'wasmcloud-host-sim' });
  const name = options.lattice ?? 'default';
  if (options.waitForWadm) await untilWadmWatches(nc, name).catch(async (err: unknown) => {
    await nc.close();
    throw err;
  });
  const state = new LatticeState(name);
  const events = new EventPacer(nc, name, options.eventSpacingMs ?? 25, state.events);
  const lattice = new SimulatedLattice(nc, state, events, options.heartbeatMs ?? 1000);
  for (const image of options.failScales ?? []) lattice.failScales(image);
  for (const image of options.failStarts ?? []) lattice.failStarts(image);
  try {
    for (const spec of options.hosts ?? [{}]) await lattice.addHost(spec);
  } catch (err) {
    await lattice.stop();
    throw err;
  }
  return lattice;
}

export class SimulatedLattice {
  private readonly live = new Map<string, SimHost>();
  private readonly timer: NodeJS.Timeout;
  private hostCount = 0;
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly state: LatticeState,
    private readonly pacer: EventPacer,
    heartbeatMs: number,
  ) {
    this.timer = setInterval(() => this.beat(), heartbeatMs);
    this.timer.unref();
  }

  get lattice(): string {
    return this.state.lattice;
  }

  /** The running hosts. */
  get hosts(): HostInfo[] {
    return [...this.live.values()].map(({ state }) => ({ id: state.id, friendlyName: state.friendlyName, labels: { ...state.labels } }));
  }

  async addHost(spec: HostSpec = {}): Promise<HostInfo> {
    const id = nkeys.createServer().getPublicKey();
    const name = spec.friendlyName ?? `sim-host-${++this.hostCount}`;
    const state = new HostState(id, name, { ...BUILTIN_LABELS, ...spec.labels });
    const host = new SimHost(this.nc, this.state, state, this.pacer, (h) => this.live.delete(h.id));
    this.live.set(id, host);
    await host.start();
    return { id, friendlyName: name, labels: { ...state.labels } };
  }

  /** Publishes `host_stopped` and stops answering; what ran on the host is gone. */
  async stopHost(id: string): Promise<void> {
    const host = this.live.get(id);
    if (!host) throw new Error(`no running simulated host ${id}`);
    host.stop();
    await this.pacer.flushed();
  }

  /** Heartbeats from every host now, instead of waiting for the next tick. */
  async heartbeatNow(): Promise<void> {
    this.beat();
    await this.pacer.flushed();
  }

  /** From now on, scaling a component with this image fails with `error`. */
  failScales(imageRef: string, error = `failed to fetch component ${imageRef}`): void {
    this.state.faults.scales.set(imageRef, error);
  }

  /** From now on, starting a provider with this image fails with `error`. */
  failStarts(imageRef: string, error = `failed to fetch provider ${imageRef}`): void {
    this.state.faults.starts.set(imageRef, error);
  }

  clearFaults(): void {
    this.state.faults.scales.clear();
    this.state.faults.starts.clear();
  }

  components(): RunningComponent[] {
    return this.running().flatMap(({ state }) =>
      [...state.components].map(([id, c]) => ({ hostId: state.id, id, imageRef: c.imageRef, annotations: { ...c.annotations }, maxInstances: c.maxInstances })),
    );
  }

  providers(): RunningProvider[] {
    return this.running().flatMap(({ state }) =>
      [...state.providers].map(([id, p]) => ({ hostId: state.id, id, imageRef: p.imageRef, annotations: { ...p.annotations } })),
    );
  }

  links(): Link[] {
    return structuredClone(this.state.links());
  }

  config(): Record<string, StringMap> {
    return Object.fromEntries([...this.state.config].map(([name, map]) => [name, { ...map }]));
  }

  /** Every control request received so far, in order. */
  requests(): CtlRequest[] {
    return [...this.state.requests];
  }

  /** Every event published so far, in order. */
  events(): PublishedEvent[] {
    return [...this.state.events];
  }

  /** Stops every host (publishing `host_stopped`, so wadm forgets them at once) and drains the connection. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      clearInterval(this.timer);
      for (const host of this.running()) host.stop();
      // After a NATS restart the connection may still be catching up: then close without draining.
      await this.pacer.flushed().catch(() => undefined);
      if (!this.nc.isClosed()) await this.nc.drain().catch(() => this.nc.close());
    })();
    return this.stopping;
  }

  private running(): SimHost[] {
    return [...this.live.values()];
  }

  private beat(): void {
    for (const host of this.running()) host.heartbeat();
  }
}
