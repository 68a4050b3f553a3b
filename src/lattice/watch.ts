// Per-lattice NATS subscriptions that keep Knowledge current: wadm's status stream and wadm's
// deploy/undeploy events. Lattices are subscribed lazily, the first time a resource names one,
// and again on every new connection (a connection that closed for good lost them all).
import type { Msg, NatsConnection, Subscription } from 'nats';
import type { Logger } from 'pino';
import { compile } from '../schema/validator.js';
import type { Knowledge } from './knowledge.js';
import { eventSubject, statusSubject } from './subjects.js';
import { WadmStatusSchema, type WadmStatus } from './wire.js';

interface Feed {
  /** The subject to subscribe for a lattice, e.g. `wadm.status.{lattice}.*`. */
  subject(lattice: string): string;
  /** Handles one message; a throw is logged and the loop goes on (a poisoned message must not stop it). */
  receive(lattice: string, msg: Msg): void;
}

const checkStatus = compile<WadmStatus>(WadmStatusSchema);

export class LatticeWatch {
  private readonly lattices = new Set<string>();
  private readonly feeds: Feed[];
  private subscribedOn: NatsConnection | undefined;
  private subscribed = new Set<string>();

  constructor(
    private readonly connection: () => NatsConnection | undefined,
    knowledge: Knowledge,
    private readonly logger: Logger,
  ) {
    this.feeds = [statusFeed(knowledge), eventFeed(knowledge)];
  }

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

/** `wadm.status.{lattice}.{name}`: wadm publishes every change of an application's status. */
function statusFeed(knowledge: Knowledge): Feed {
  return {
    subject: statusSubject,
    receive: (lattice, msg) => {
      const status: unknown = JSON.parse(msg.string());
      if (!checkStatus(status)) throw new Error(checkStatus.problems(status, 'status').join('; '));
      knowledge.rememberStatus(lattice, msg.subject.slice(`wadm.status.${lattice}.`.length), status, true);
    },
  };
}

/**
 * wadm announces every deploy and undeploy (including those of `wash app` and of deletes) on
 * `wadm.evt.{lattice}.manifest_published|manifest_unpublished`: forget that model at once.
 */
function eventFeed(knowledge: Knowledge): Feed {
  return {
    subject: eventSubject,
    receive: (lattice, msg) => {
      if (!/manifest_(un)?published$/.test(msg.subject)) return;
      const event = JSON.parse(msg.string()) as { data?: { name?: unknown; metadata?: { name?: unknown } } };
      const name = event.data?.metadata?.name ?? event.data?.name;
      if (typeof name === 'string') knowledge.forgetModel(lattice, name);
      else knowledge.forgetLattice(lattice);
    },
  };
}
