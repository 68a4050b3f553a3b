// Per-lattice NATS subscriptions that feed our caches: wadm's status stream and wadm's
// deploy/undeploy events. Lattices are subscribed lazily, the first time a resource names one,
// and again on every new connection (a connection that closed for good lost them all).
import type { Msg, NatsConnection, Subscription } from 'nats';
import type { Logger } from 'pino';

export interface Feed {
  /** The subject to subscribe for a lattice, e.g. `wadm.status.{lattice}.*`. */
  subject(lattice: string): string;
  /** Handles one message; a throw is logged and the loop goes on (a poisoned message must not stop it). */
  receive(lattice: string, msg: Msg): void;
}

export class LatticeWatch {
  private readonly lattices = new Set<string>();
  private subscribedOn: NatsConnection | undefined;
  private subscribed = new Set<string>();

  constructor(
    private readonly connection: () => NatsConnection | undefined,
    private readonly feeds: Feed[],
    private readonly logger: Logger,
  ) {}

  watch(lattice: string): void {
    this.lattices.add(lattice);
    const nc = this.connection();
    if (!nc) return;
    if (nc !== this.subscribedOn) {
      this.subscribed = new Set();
      this.subscribedOn = nc;
    }
    for (const l of this.lattices) {
      if (this.subscribed.has(l)) continue;
      this.subscribed.add(l);
      for (const feed of this.feeds) void this.consume(l, feed, nc.subscribe(feed.subject(l)));
    }
  }

  private async consume(lattice: string, feed: Feed, subscription: Subscription): Promise<void> {
    for await (const msg of subscription) {
      try {
        feed.receive(lattice, msg);
      } catch (err) {
        this.logger.warn({ subject: msg.subject, err: (err as Error).message }, 'ignoring a malformed message');
      }
    }
  }
}
