// Per-lattice NATS subscriptions that keep Knowledge current: wadm's status stream and wadm's
// deploy/undeploy events. A lattice is subscribed the first time a hook call reads a model in it,
// again on every new connection (one that closed for good lost them all), and unsubscribed once
// no call has used it for a while (its knowledge goes with it). A subscription NATS refuses
// (permissions) or that fails otherwise ends with a warning and a count, never with the process:
// its lattice is then served without memory, and subscribed again after a pause.
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

export interface WatchOptions {
  now: () => number;
  /** A lattice no hook call used for this long is unsubscribed (and its knowledge dropped). */
  idleMs: number;
  /** A lattice whose subscription failed is subscribed again only after this long. */
  retryFailedMs: number;
  /** A subscription ended with an error: `denied` when NATS refused it (permissions). */
  onFailure?: (lattice: string, denied: boolean) => void;
}

/** One lattice's subscriptions on one connection, and when a call last used the lattice. */
interface Watched {
  on: NatsConnection;
  subscriptions: Subscription[];
  usedAt: number;
}

const checkStatus = compile<WadmStatus>(WadmStatusSchema);

export class LatticeWatch {
  private readonly watched = new Map<string, Watched>();
  /** Lattices whose subscription failed, and when: not subscribed again before retryFailedMs. */
  private readonly failedAt = new Map<string, number>();
  private readonly feeds: Feed[];
  private sweptAt = 0;

  constructor(
    private readonly connection: () => NatsConnection | undefined,
    private readonly knowledge: Knowledge,
    private readonly logger: Logger,
    private readonly options: WatchOptions,
  ) {
    this.feeds = [statusFeed(knowledge), eventFeed(knowledge)];
  }

  /** Lattices subscribed now (for /metrics). */
  get size(): number {
    return this.watched.size;
  }

  /** A hook call is about to read wadm in this lattice: make sure its changes reach Knowledge. */
  watch(lattice: string): void {
    const now = this.options.now();
    this.sweep(now);
    const nc = this.connection();
    const current = this.watched.get(lattice);
    if (current && (current.on === nc || !nc)) return void (current.usedAt = now);
    if (!nc) return;
    const failed = this.failedAt.get(lattice);
    if (failed !== undefined && now - failed < this.options.retryFailedMs) return;
    this.failedAt.delete(lattice);
    this.subscribe(lattice, nc, now);
  }

  /** A new connection: every lattice watched on the old one is subscribed on it. */
  resubscribe(): void {
    const nc = this.connection();
    if (!nc) return;
    for (const [lattice, watched] of this.watched) if (watched.on !== nc) this.subscribe(lattice, nc, watched.usedAt);
  }

  private subscribe(lattice: string, nc: NatsConnection, usedAt: number): void {
    const subscriptions = this.feeds.map((feed) => {
      const subscription = nc.subscribe(feed.subject(lattice));
      this.consume(lattice, feed, subscription).catch((err: unknown) => this.failed(lattice, subscription, err));
      return subscription;
    });
    this.watched.set(lattice, { on: nc, subscriptions, usedAt });
    this.knowledge.watching(lattice, true);
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

  /**
   * A subscription ended with an error: drop the lattice's subscriptions and knowledge, retry
   * later. Each refused subject is logged and counted, the second of a lattice's pair too.
   */
  private failed(lattice: string, subscription: Subscription, err: unknown): void {
    const watched = this.watched.get(lattice);
    if (watched?.subscriptions.includes(subscription)) {
      this.drop(lattice, watched);
      this.failedAt.set(lattice, this.options.now());
    }
    const denied = (err as { code?: unknown }).code === 'PERMISSIONS_VIOLATION';
    const subject = subscription.getSubject();
    this.logger.warn(
      { lattice, subject, err: err instanceof Error ? err.message : String(err), retryInSeconds: this.options.retryFailedMs / 1000 },
      denied
        ? `NATS refused the subscription to ${subject}: lattice "${lattice}" is served without memory until it is granted`
        : `the subscription to ${subject} failed`,
    );
    this.options.onFailure?.(lattice, denied);
  }

  /** At most once a minute: unsubscribe the lattices no call used for idleMs. */
  private sweep(now: number): void {
    if (now - this.sweptAt < Math.min(60_000, this.options.idleMs)) return;
    this.sweptAt = now;
    for (const [lattice, watched] of this.watched) if (now - watched.usedAt >= this.options.idleMs) this.drop(lattice, watched);
  }

  private drop(lattice: string, watched: Watched): void {
    this.watched.delete(lattice);
    for (const subscription of watched.subscriptions) if (!subscription.isClosed()) subscription.unsubscribe();
    this.knowledge.watching(lattice, false);
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
 * `wadm.evt.{lattice}.manifest_published|manifest_unpublished`: forget that model at once, and
 * note which version a deploy announced (its data is the manifest, annotated with its version).
 */
function eventFeed(knowledge: Knowledge): Feed {
  return {
    subject: eventSubject,
    receive: (lattice, msg) => {
      if (!/manifest_(un)?published$/.test(msg.subject)) return;
      const event = JSON.parse(msg.string()) as {
        data?: { name?: unknown; metadata?: { name?: unknown; annotations?: { version?: unknown } } };
      };
      const name = event.data?.metadata?.name ?? event.data?.name;
      const version = msg.subject.endsWith('_published') ? event.data?.metadata?.annotations?.version : undefined;
      if (typeof name === 'string') knowledge.forgetModel(lattice, name, typeof version === 'string' ? version : undefined);
      else knowledge.forgetLattice(lattice);
    },
  };
}
