// One simulated wasmCloud 1.x host: its control subscriptions (lattice-host-protocol.md §1.2),
// its announcements (host_started, host_heartbeat, host_stopped) and its events, all with the
// host id as the CloudEvent source.
import type { NatsConnection, Subscription } from 'nats';
import type { HandlerContext } from './context.js';
import type { EventPacer } from './event-pacer.js';
import { HOST_VERSION, inventory } from './inventory.js';
import { dispatch } from './router.js';
import type { HostState, LatticeState } from './state.js';

export class SimHost {
  private readonly subscriptions: Subscription[] = [];
  private stopped = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly lattice: LatticeState,
    readonly state: HostState,
    private readonly events: EventPacer,
    /** Called once the host has stopped (by `stop()` or a `host.stop` request). */
    private readonly onStopped: (host: SimHost) => void,
  ) {}

  get id(): string {
    return this.state.id;
  }

  /** Subscribes and flushes before announcing: wadm may command the host as soon as it hears of it. */
  async start(): Promise<void> {
    const p = `wasmbus.ctl.v1.${this.lattice.lattice}`;
    const id = this.state.id;
    for (const kind of ['component', 'provider', 'host', 'label']) this.listen(p, `${p}.${kind}.*.${id}`);
    for (const shared of ['host.ping', 'registry.put', 'component.auction', 'provider.auction']) this.listen(p, `${p}.${shared}`);
    // Lattice-wide data: one answer per request, from whichever host the queue group picks.
    this.listen(p, `${p}.link.*`, `${p}.link`);
    this.listen(p, `${p}.claims.get`, `${p}.claims`);
    this.listen(p, `${p}.config.>`, `${p}.config`);
    await this.nc.flush();
    this.emit('host_started', { friendly_name: this.state.friendlyName, labels: this.state.labels, uptime_seconds: 0, version: HOST_VERSION });
    this.heartbeat();
  }

  heartbeat(): void {
    if (!this.stopped) this.emit('host_heartbeat', inventory(this.state));
  }

  /** A graceful stop: wadm forgets the host and everything on it as soon as it sees `host_stopped`. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const sub of this.subscriptions) sub.unsubscribe();
    this.emit('host_stopped', { labels: this.state.labels }, true);
    this.onStopped(this);
  }

  private listen(prefix: string, subject: string, queue?: string): void {
    const context: HandlerContext = {
      lattice: this.lattice,
      host: this.state,
      emit: (type, data) => this.emit(type, data),
      stopHost: () => this.stop(),
    };
    const sub = this.nc.subscribe(subject, {
      ...(queue ? { queue } : {}),
      callback: (err, msg) => {
        if (!err && !this.stopped) dispatch(context, prefix, msg);
      },
    });
    this.subscriptions.push(sub);
  }

  private emit(type: string, data: Record<string, unknown>, evenIfStopped = false): void {
    if (!this.stopped || evenIfStopped) this.events.publish(this.state.id, type, data);
  }
}
