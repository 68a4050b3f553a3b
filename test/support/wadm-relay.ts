// The real wadm (test/support/wadm.ts) behind a fault-injecting relay. wadm listens on its own
// `--api-prefix`; the relay takes the public `wadm.api.{lattice}.>` requests, records them, and
// passes each one on with the caller's reply subject, so wadm answers the caller directly — unless
// a test asked for a fault: no responders (pause), a request that never reaches wadm, a reply that
// is lost after wadm acted, wadm's storage-error reply, a refusal, or a request held until the
// test releases it (a slow wadm, a timeout, a race). Everything else is the real wadm's behaviour,
// including its store made unreadable through JetStream (storeReadable).
import { closeConnection } from '../../src/lattice/connection.js';
import { connect, type Msg, type NatsConnection, type Subscription } from 'nats';
import { untilWadmHoldsOnly } from './host-sim/wadm-ready.js';
import { sleep, until } from './wait.js';
import { startWadm, type WadmProcess } from './wadm.js';

const PUBLIC_PREFIX = 'wadm.api';
/** Where the real wadm listens: nothing but the relay and `model()`/`clear()` sends there. */
const REAL_PREFIX = 'relayed.wadm.api';
const ASK_TIMEOUT_MS = 10_000;
const STATUS_STREAM = 'wadm_status';
/** The stream of wadm's KV bucket of models (`--manifest-bucket`, default `wadm_manifests`). */
const MANIFEST_STREAM = 'KV_wadm_manifests';

/** The operation token of the subject (`get` without a name is the list, `list` its deprecated form). */
export type WadmOp = 'put' | 'get' | 'list' | 'versions' | 'del' | 'deploy' | 'undeploy' | 'status' | 'history';

export type Fault =
  /** wadm's reply when its KV store fails (`handlers.rs`), e.g. a compare-and-set conflict. */
  | { kind: 'storage-error' }
  /** wadm's error reply shape with this message. */
  | { kind: 'error'; message: string }
  /** Dropped before wadm sees it: the caller times out and nothing changed. */
  | { kind: 'lost-request' }
  /** wadm acts, its reply is dropped: the caller times out although the change was made. */
  | { kind: 'lost-reply' };

export interface RelayedRequest {
  op: string;
  lattice: string;
  name?: string;
  contentType?: string;
}

/** A request kept at the relay until released: wadm sees it only then. */
export interface Held {
  /** Resolves once a matching request has reached the relay. */
  readonly arrived: Promise<void>;
  release(): void;
}

export interface AppState {
  versions: string[];
  deployed: string | null;
}

interface Rule {
  op: WadmOp;
  /** Only requests of this lattice; any lattice when absent. */
  lattice?: string;
  left: number;
  apply(msg: Msg): void | Promise<void>;
}

export class WadmRelay {
  private readonly log: RelayedRequest[] = [];
  private rules: Rule[] = [];
  /** Every request waits this long at the relay before wadm sees it (a busy wadm), until reset(). */
  private delayMs = 0;
  private sub: Subscription | undefined;
  private wadm: WadmProcess | undefined;

  constructor(
    private readonly nc: NatsConnection,
    /** What wadm connects to: the server, or a gate in front of it (nats-gate.ts). */
    private readonly wadmNatsUrl: string,
    private readonly wadmArgs: string[],
  ) {}

  /** Every request the relay received, faulted ones included, in order. */
  get requests(): readonly RelayedRequest[] {
    return this.log;
  }

  count(op?: WadmOp): number {
    return op === undefined ? this.log.length : this.log.filter((r) => r.op === op).length;
  }

  /** The next `times` requests of `op` get `fault` instead of (or, for lost-reply, besides) wadm's answer. */
  inject(op: WadmOp, fault: Fault, { times = 1 } = {}): void {
    this.rules.push({ op, left: times, apply: (msg) => this.fault(msg, fault) });
  }

  /** The next request of `op` (of `lattice` only, when given) waits at the relay until `release()`. */
  hold(op: WadmOp, { lattice }: { lattice?: string } = {}): Held {
    let arrived!: () => void;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const held: Held = { arrived: new Promise<void>((resolve) => (arrived = resolve)), release };
    const apply = async (msg: Msg) => (arrived(), await released, this.forward(msg));
    this.rules.push({ op, left: 1, apply, ...(lattice === undefined ? {} : { lattice }) });
    return held;
  }

  /**
   * Makes the real wadm's manifest store unreadable, or readable again: no fault of the relay but
   * JetStream's own. wadm reads its KV bucket through JetStream's direct get (the bucket's stream
   * allows it when wadm opens it, and wadm's client keeps using it); turned off on the stream,
   * every read fails as while the stream has no leader, and wadm answers `Internal storage error`
   * to every request that reads a model, in every lattice. `model.status` and `model.history`
   * read no model and answer as before. Requests through `model()` and `clear()` fail meanwhile.
   */
  async storeReadable(readable: boolean): Promise<void> {
    const jsm = await this.nc.jetstreamManager();
    const { config } = await jsm.streams.info(MANIFEST_STREAM);
    await jsm.streams.update(MANIFEST_STREAM, { ...config, allow_direct: readable });
  }

  /** From now on every request reaches wadm `ms` later, as from a wadm busy with other lattices. */
  slow(ms: number): void {
    this.delayMs = ms;
  }

  /** Stops listening: requests then fail with NATS "no responders", as with no wadm running. */
  async pause(): Promise<void> {
    this.sub?.unsubscribe();
    this.sub = undefined;
    await this.nc.flush();
  }

  async resume(): Promise<void> {
    this.sub ??= this.nc.subscribe(`${PUBLIC_PREFIX}.>`, {
      callback: (_err, msg) => void this.relay(msg)?.catch((e: unknown) => console.error('wadm-relay:', msg.subject, e)),
    });
    await this.nc.flush();
  }

  /** Forgets faults and the request log. */
  reset(): void {
    this.delayMs = 0;
    this.rules = [];
    this.log.length = 0;
  }

  /** What the real wadm holds for an application, asked past the relay (not logged, never faulted). */
  async model(lattice: string, name: string): Promise<AppState | undefined> {
    const reply = (await this.ask(lattice, `versions.${name}`)) as { result: string; versions?: { version: string; deployed: boolean }[] };
    if (reply.result === 'notfound') return undefined;
    const versions = reply.versions ?? [];
    return { versions: versions.map((v) => v.version), deployed: versions.find((v) => v.deployed)?.version ?? null };
  }

  /** Deletes every application of the lattice in the real wadm; returns their names. */
  async clear(lattice: string): Promise<string[]> {
    const { models = [] } = (await this.ask(lattice, 'get')) as { models?: { name: string }[] };
    for (const { name } of models) await this.ask(lattice, `del.${name}`, '{}');
    await until(async () => ((await this.ask(lattice, 'get')) as { models?: unknown[] }).models?.length === 0, {
      what: `wadm forgot lattice ${lattice}`,
    });
    return models.map((m) => m.name);
  }

  /**
   * Waits for wadm's last word on each deleted application (`undeployed`, published once its
   * scalers are gone), then purges the lattice's statuses: the next test starts with none.
   */
  async forgetStatuses(lattice: string, names: string[]): Promise<void> {
    const jsm = await this.nc.jetstreamManager();
    const last = (name: string) =>
      jsm.streams.getMessage(STATUS_STREAM, { last_by_subj: `wadm.status.${lattice}.${name}` }).then(
        (m) => m.json<{ status: { type: string } }>().status.type,
        () => undefined,
      );
    for (const name of names) await until(async () => (await last(name)) === 'undeployed', { what: `wadm's undeployed status of ${name}` });
    await jsm.streams.purge(STATUS_STREAM, { filter: `wadm.status.${lattice}.*` });
  }

  /** Resolves once wadm's store holds no host of the lattice but these (wadm-ready.ts). */
  untilHoldsOnly(lattice: string, hostIds: string[]): Promise<void> {
    return untilWadmHoldsOnly(this.nc, lattice, hostIds);
  }

  /** Starts the real wadm behind the relay (again, after a stop); its store stays if it is in files. */
  async startWadm(): Promise<void> {
    await this.wadm?.stop();
    this.wadm = await startWadm(this.wadmNatsUrl, ['--api-prefix', REAL_PREFIX, ...this.wadmArgs]);
  }

  /**
   * wadm stopped, its JetStream state deleted (every stream of the test's server: wadm's KV
   * buckets of models and hosts, its status, event and command streams), and started again: wadm
   * recreates them empty, as after the loss of a NATS server's store, and announces nothing.
   */
  async restartOnEmptyStore(): Promise<void> {
    await this.wadm?.stop();
    this.wadm = undefined;
    const jsm = await this.nc.jetstreamManager();
    for await (const stream of jsm.streams.names()) await jsm.streams.delete(stream);
    await this.startWadm();
  }

  async stop(): Promise<void> {
    await this.wadm?.stop();
    await closeConnection(this.nc);
  }

  /** Any request to the real wadm past the relay (not logged, never faulted), e.g. `put` to fill a lattice. */
  async direct(
    lattice: string,
    operation: string,
    body = '',
    timeoutMs = ASK_TIMEOUT_MS,
  ): Promise<{ result: string; message?: string } & Record<string, unknown>> {
    const reply = await this.nc.request(`${REAL_PREFIX}.${lattice}.model.${operation}`, body, { timeout: timeoutMs });
    return reply.json();
  }

  private ask(lattice: string, operation: string, body = ''): Promise<unknown> {
    return this.direct(lattice, operation, body);
  }

  private relay(msg: Msg): Promise<void> | void {
    const [lattice = '', , operation = '', name] = msg.subject.slice(PUBLIC_PREFIX.length + 1).split('.');
    const contentType = msg.headers?.get('Content-Type') || undefined;
    this.log.push({
      op: operation,
      lattice,
      ...(name === undefined ? {} : { name }),
      ...(contentType === undefined ? {} : { contentType }),
    });
    if (this.delayMs > 0) return sleep(this.delayMs).then(() => this.route(msg, operation, lattice));
    return this.route(msg, operation, lattice);
  }

  private route(msg: Msg, operation: string, lattice: string): Promise<void> | void {
    const rule = this.rules.find((r) => r.op === operation && (r.lattice === undefined || r.lattice === lattice));
    if (rule === undefined) return this.forward(msg);
    if (--rule.left === 0) this.rules = this.rules.filter((r) => r !== rule);
    return rule.apply(msg);
  }

  /** On to the real wadm, which answers the caller's reply subject itself. */
  private forward(msg: Msg): void {
    this.nc.publish(realSubject(msg), msg.data, {
      ...(msg.reply ? { reply: msg.reply } : {}),
      ...(msg.headers ? { headers: msg.headers } : {}),
    });
  }

  private async fault(msg: Msg, fault: Fault): Promise<void> {
    if (fault.kind === 'storage-error') msg.respond(JSON.stringify({ result: 'error', message: 'Internal storage error' }));
    if (fault.kind === 'error') msg.respond(JSON.stringify({ result: 'error', message: fault.message }));
    if (fault.kind === 'lost-reply') {
      await this.nc.request(realSubject(msg), msg.data, { timeout: ASK_TIMEOUT_MS, ...(msg.headers ? { headers: msg.headers } : {}) });
    }
  }
}

function realSubject(msg: Msg): string {
  return `${REAL_PREFIX}${msg.subject.slice(PUBLIC_PREFIX.length)}`;
}

/**
 * Starts the relay, then the real wadm behind it (wadm's readiness probe on the public subject
 * already goes through the relay). `wadmArgs` go to wadm, e.g. `--stream-persistence file`;
 * `wadmNatsUrl` is where wadm itself connects (a gate that holds its publications: nats-gate.ts).
 */
export async function startRelayedWadm(natsUrl: string, wadmArgs: string[] = [], wadmNatsUrl = natsUrl): Promise<WadmRelay> {
  // Tests stop and restart nats-server: keep reconnecting, quickly, and resubscribe.
  const nc = await connect({ servers: natsUrl, name: 'wadm-relay', maxReconnectAttempts: -1, reconnectTimeWait: 50 });
  const relay = new WadmRelay(nc, wadmNatsUrl, wadmArgs);
  await relay.resume();
  try {
    await relay.startWadm();
  } catch (err) {
    await relay.stop();
    throw err;
  }
  relay.reset();
  return relay;
}
