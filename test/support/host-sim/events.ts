// A lattice's events, published one at a time, a few milliseconds apart, as CloudEvents 1.0 whose `source` is the
// host id (wadm replaces `host_id` in the data with it) and whose `data` is an object (a JSON string is skipped).
//
// Why the spacing: wadm 0.21.1 pulls its event consumer one message per request (async-nats 0.39 `messages()`,
// batch 1), and that pull stream can lose count of a request whose reply is already waiting at the server: with a
// backlog, the message can arrive before the stream records the pull, and it then waits ~35 s for its idle heartbeat
// check. We saw that stall once mid-test in about 35 unpaced runs of test/lattice/host-sim.test.ts, and never in 70+ paced
// ones. Real hosts rarely burst, so spacing events is also closer to what wadm meets in production.
import { randomUUID } from 'node:crypto';
import { JSONCodec, type NatsConnection } from 'nats';

export interface PublishedEvent {
  /** The short name: `component_scaled`, `host_heartbeat`, … */
  type: string;
  source: string;
  data: Record<string, unknown>;
}

const json = JSONCodec();

export class EventPacer {
  /** Every event, once published. */
  readonly published: PublishedEvent[] = [];
  private readonly queue: PublishedEvent[] = [];
  private draining: Promise<void> = Promise.resolve();
  private busy = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly lattice: string,
    private readonly spacingMs: number,
  ) {}

  publish(source: string, type: string, data: Record<string, unknown>): void {
    this.queue.push({ type, source, data: structuredClone(data) });
    if (!this.busy) this.draining = this.drain();
  }

  /** Resolves once every queued event has been handed to the server. */
  async flushed(): Promise<void> {
    await this.draining;
    if (!this.nc.isClosed() && !this.nc.isDraining()) await this.nc.flush();
  }

  private async drain(): Promise<void> {
    this.busy = true;
    try {
      for (let event = this.queue.shift(); event; event = this.queue.shift()) {
        if (this.nc.isClosed() || this.nc.isDraining()) break;
        publishEvent(this.nc, this.lattice, event);
        this.published.push(event);
        // Also after the last one: the next event, whenever it comes, keeps the spacing.
        await new Promise((resolve) => setTimeout(resolve, this.spacingMs));
      }
    } finally {
      this.busy = false;
    }
  }
}

/** One event on the lattice's subject, as a host publishes it. */
export function publishEvent(nc: NatsConnection, lattice: string, { type, source, data }: PublishedEvent): void {
  const envelope = {
    specversion: '1.0',
    id: randomUUID(),
    type: `com.wasmcloud.lattice.${type}`,
    source,
    datacontenttype: 'application/json',
    time: new Date().toISOString(),
    data,
  };
  nc.publish(`wasmbus.evt.${lattice}.${type}`, json.encode(envelope));
}
