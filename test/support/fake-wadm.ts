// A wadm 0.21 test double on a real NATS connection: the API of reference §1–§6 (same subjects,
// queue group, replies and status subject) over an in-memory store, plus fault injection and
// simulated hosts. Behaviour was checked against the wadm source at 589e98b and against
// wadm-types 0.8.3's parser; the pieces live in ./fake-wadm/.
//
// Like real wadm, manifests are not stored as received but re-serialized (§13 item 7): `get`
// returns what wadm would return. Where wadm's order is unspecified (HashMap-backed config
// properties) the double keeps insertion order.
import { connect, type Msg, type NatsConnection, type Subscription } from 'nats';
import { storageErrorReply, FaultQueue, type Fault, type FaultTarget } from './fake-wadm/faults.js';
import * as models from './fake-wadm/handlers.js';
import * as lifecycle from './fake-wadm/lifecycle.js';
import type { Deps, Incoming, Outcome } from './fake-wadm/requests.js';
import { WadmPanic } from './fake-wadm/serde.js';
import { manifestToWire } from './fake-wadm/serialize.js';
import { StatusBoard, type HostsOptions } from './fake-wadm/status-board.js';
import { ManifestStore } from './fake-wadm/store.js';
import { normalizePrefix, route } from './fake-wadm/subjects.js';
import type { Manifest, Status, WadmOp, WireObject } from './fake-wadm/types.js';

export type { Fault, FaultTarget } from './fake-wadm/faults.js';
export type { HostBehaviour, HostsOptions } from './fake-wadm/status-board.js';
export type { ScalerStatus, Status, StatusInfo, StatusType, WadmOp } from './fake-wadm/types.js';
export { statusSubject } from './fake-wadm/status-board.js';

export interface FakeWadmOptions {
  servers: string | string[];
  /** Like wadm's `--api-prefix`; default `wadm.api`. */
  apiPrefix?: string;
}

export interface RequestRecord {
  /** The subject's operation (`get` without a name is the list); for an unroutable subject, its raw token or ''. */
  op: WadmOp | (string & {});
  lattice: string;
  name?: string;
  subject: string;
  contentType?: string;
  body: string;
}

export interface AppState {
  /** Insertion order, oldest first; the last one is wadm's "current" version. */
  versions: string[];
  deployed: string | null;
  /** Each version as `model.get` would return it. */
  manifests: Map<string, WireObject>;
}

const STOP_DRAIN_MS = 2_000;

const HANDLERS: Record<WadmOp, (deps: Deps, req: Incoming) => Outcome> = {
  put: models.put, get: models.get, list: models.list, versions: models.versions, status: models.status,
  history: models.history, deploy: lifecycle.deploy, undeploy: lifecycle.undeploy, del: lifecycle.del,
};

export class FakeWadm {
  readonly apiPrefix: string;
  private readonly store = new ManifestStore();
  private readonly board: StatusBoard;
  private readonly faults = new FaultQueue();
  private readonly log: RequestRecord[] = [];
  private sub: Subscription | undefined;
  private loop: Promise<void> = Promise.resolve();
  private statusLoop: Promise<void> = Promise.resolve();

  constructor(private readonly nc: NatsConnection, apiPrefix: string) {
    this.apiPrefix = normalizePrefix(apiPrefix);
    this.board = new StatusBoard(
      (subject, payload) => this.nc.publish(subject, payload),
      (lattice) => this.deployedManifests(lattice),
    );
  }

  /** Every request received, in order (faulted ones included). */
  get requests(): readonly RequestRecord[] {
    return this.log;
  }

  count(op?: WadmOp): number {
    return op === undefined ? this.log.length : this.log.filter((r) => r.op === op).length;
  }

  model(lattice: string, name: string): AppState | undefined {
    const app = this.store.get(lattice, name);
    if (app === undefined) return undefined;
    const manifests = new Map([...app.manifests].map(([v, m]) => [v, manifestToWire(m)] as const));
    return { versions: [...app.manifests.keys()], deployed: app.deployed, manifests };
  }

  /** The last status published for an app (what `model.status` returns), if any. */
  lastStatus(lattice: string, name: string): Status | undefined {
    return this.board.get(lattice, name);
  }

  /** Default for every lattice: `{ behaviour: 'none' }`, i.e. no hosts and no status at all. */
  setHosts(lattice: string, options: HostsOptions): void {
    this.board.setHosts(lattice, options);
  }

  /** Publishes `status` on `wadm.status.{lattice}.{name}` even if unchanged, and remembers it. */
  async publishStatus(lattice: string, name: string, status: Status): Promise<void> {
    this.board.inject(lattice, name, status);
    await this.nc.flush();
  }

  inject(op: FaultTarget, fault: Fault, options: { times?: number } = {}): void {
    this.faults.add(op, fault, options.times ?? 1);
  }

  /** Unsubscribes: requests then fail with NATS "no responders" (unless another wadm listens). */
  async pause(): Promise<void> {
    const sub = this.sub;
    this.sub = undefined;
    sub?.unsubscribe();
    await this.loop;
    await this.nc.flush();
  }

  async resume(): Promise<void> {
    if (this.sub === undefined) this.listen();
    await this.nc.flush();
  }

  /** Forgets apps, statuses, hosts, faults and the request log; a pause stays in force. */
  reset(): void {
    this.store.clear();
    this.board.clear();
    this.faults.clear();
    this.log.length = 0;
  }

  /** Drains the connection; if the server is gone (drain would wait for a reconnect forever), closes it. */
  async stop(): Promise<void> {
    this.board.clear();
    if (!this.nc.isClosed()) {
      let timer: NodeJS.Timeout | undefined;
      const gaveUp = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), STOP_DRAIN_MS)));
      const drained = this.nc.drain().then(() => false, () => false);
      if (await Promise.race([drained, gaveUp])) await this.nc.close();
      clearTimeout(timer);
    }
    await this.loop;
    await this.statusLoop;
  }

  /**
   * Follows statuses published by others on `wadm.status.*.*` (the connection has no echo, so
   * not our own). It stays on during a pause: the real stream keeps recording while wadm is down.
   */
  watchStatuses(): void {
    const sub = this.nc.subscribe('wadm.status.*.*');
    this.statusLoop = (async () => {
      for await (const msg of sub) {
        const [, , lattice = '', name = ''] = msg.subject.split('.');
        this.board.observe(lattice, name, parseStatus(msg.data));
      }
    })();
  }

  /** Subscribes; `startFakeWadm` calls it once, `resume` again after a pause. */
  listen(): void {
    const sub = this.nc.subscribe(`${this.apiPrefix}.>`, { queue: 'wadm_server' });
    this.sub = sub;
    // One request at a time, like wadm's `serve` loop: a slow request holds up the next ones.
    this.loop = (async () => {
      for await (const msg of sub) {
        // A request that breaks the double (say, a reply on a closing connection) must not stop the loop.
        await this.handle(msg).catch((e: unknown) => console.error('fake-wadm: request failed', msg.subject, e));
      }
    })();
  }

  private async handle(msg: Msg): Promise<void> {
    const r = route(this.apiPrefix, msg.subject);
    const contentType = msg.headers?.has('Content-Type') ? msg.headers.get('Content-Type') : undefined;
    this.record(msg, r.ok ? r.op : r.operation ?? '', r.lattice ?? '', r.ok ? r.name : undefined, contentType);
    if (!r.ok) return this.send(msg, { result: 'error', message: r.error });
    const incoming: Incoming = { lattice: r.lattice, name: r.name, body: msg.data, contentType };
    const fault = this.faults.take(r.op);
    if (fault?.kind === 'storage-error') return this.send(msg, storageErrorReply(r.op, r.name));
    if (fault?.kind === 'error') return this.send(msg, { result: 'error', message: fault.message });
    if (fault?.kind === 'no-reply' && !fault.apply) return; // dropped before any state change
    if (fault?.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, fault.ms));
    const outcome = this.run(r.op, incoming);
    if (outcome === undefined) return;
    if (fault?.kind !== 'no-reply') this.send(msg, outcome.reply);
    outcome.after?.();
  }

  private run(op: WadmOp, req: Incoming): Outcome | undefined {
    try {
      return HANDLERS[op](this.deps, req);
    } catch (e) {
      // wadm would panic and exit on these inputs: the caller sees no reply.
      if (e instanceof WadmPanic) return undefined;
      return { reply: { result: 'error', message: `fake-wadm bug: ${e instanceof Error ? e.stack : String(e)}` } };
    }
  }

  private get deps(): Deps {
    return { store: this.store, board: this.board };
  }

  private send(msg: Msg, body: object | undefined): void {
    // Like wadm's `send_reply`: a request without a reply subject gets nothing.
    if (body !== undefined && msg.reply) msg.respond(JSON.stringify(body));
  }

  private record(msg: Msg, op: string, lattice: string, name: string | undefined, contentType: string | undefined): void {
    const entry: RequestRecord = { op, lattice, subject: msg.subject, body: new TextDecoder().decode(msg.data) };
    if (name !== undefined) entry.name = name;
    if (contentType !== undefined) entry.contentType = contentType;
    this.log.push(entry);
  }

  private deployedManifests(lattice: string): Manifest[] {
    return this.store.list(lattice).flatMap((app) => app.deployedManifest ?? []);
  }
}

/** Connects, subscribes `{apiPrefix}.>` in queue group `wadm_server`, and is ready on return. */
export async function startFakeWadm(options: FakeWadmOptions): Promise<FakeWadm> {
  const nc = await connect({
    servers: options.servers,
    name: 'fake-wadm',
    // Tests stop and restart nats-server: keep reconnecting, quickly, and resubscribe.
    maxReconnectAttempts: -1,
    reconnectTimeWait: 50,
    // Our own status publishes must not come back through the status subscription.
    noEcho: true,
  });
  const wadm = new FakeWadm(nc, options.apiPrefix ?? 'wadm.api');
  wadm.watchStatuses();
  wadm.listen();
  await nc.flush();
  return wadm;
}

function parseStatus(data: Uint8Array): Status | undefined {
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(data));
    return typeof value === 'object' && value !== null && 'status' in value ? (value as Status) : undefined;
  } catch {
    return undefined;
  }
}
