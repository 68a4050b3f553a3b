// Publishes a lattice's events one at a time, a few milliseconds apart. wadm 0.21.1 pulls its
// event consumer one message per request (async-nats 0.39 `messages()`, batch 1), and that pull
// stream can lose count of a request whose reply is already waiting at the server: with a backlog,
// the message can arrive before the stream records the pull, and it then waits ~35 s for its idle
// heartbeat check. We saw that stall once mid-test (consumer at num_waiting 0, num_pending 2) in
// about 35 unpaced runs of test/host-sim.test.ts, and never in 70+ paced ones. Real hosts rarely
// burst (a provider's health check comes 5 s after its start), so spacing events is also closer to
// what wadm meets in production.
import type { NatsConnection } from 'nats';
import type { PublishedEvent } from './types.js';
import { cloudEvent, encode } from './wire.js';

export class EventPacer {
  private readonly queue: Omit<PublishedEvent, 'at'>[] = [];
  private draining: Promise<void> = Promise.resolve();
  private busy = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly lattice: string,
    private readonly spacingMs: number,
    /** Every event, once published. */
    private readonly log: PublishedEvent[],
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
        this.nc.publish(`wasmbus.evt.${this.lattice}.${event.type}`, encode(cloudEvent(event.source, event.type, event.data)));
        this.log.push({ ...event, at: new Date() });
        // Also after the last one: the next event, whenever it comes, keeps the spacing.
        if (this.spacingMs > 0) await new Promise((resolve) => setTimeout(resolve, this.spacingMs));
      }
    } finally {
      this.busy = false;
    }
  }
}
