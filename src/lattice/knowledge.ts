// What this replica remembers of wadm, so that a settled application's resync needs no wadm
// request: each model we own (versions, deployed version, owner evidence), each application's
// latest status, and when each lattice's wadm last answered. One entry per application, replaced
// (never mutated) on every change, so that its identity says "nothing changed": stamp().
//
// Every event that replaces or withdraws a stamp, and so stops the reuse of an answer
// (http/answers.ts owns the rest of that rule):
//   - remember(): a model read or written by a hook call (sync.ts, through the core's
//     memorable(): only models that are ours), or forgotten when wadm could not be asked
//     (gateway.ts, and rememberSizes() after a call wadm stopped answering);
//   - rememberStatus(): a status message from wadm (watch.ts) or a status read (gateway.ts);
//   - deployed(): wadm acknowledged our deploy (gateway.ts);
//   - forgetModel(), forgetLattice(): wadm announced a deploy (and of which version), undeploy or
//     delete (watch.ts);
//   - watching(lattice, false): the lattice's subscriptions were refused or dropped (watch.ts);
//   - reset(): the NATS connection was lost or made again (wiring/lattice.ts);
//   - time: the lattice's wadm answered nothing within livenessMs (answered() is called on
//     every answer, wiring/lattice.ts), or the model was read longer than modelTtlMs ago, or
//     neither it was read nor its lattice listed within checkPeriodMs (checked());
//   - checked(): the lattice's list no longer shows the model as remembered (core/census.ts);
//   - absent(): a read found no model: whatever wadm said of it before is void;
//   - capacity: the entry is evicted, least recently used first.
//
// What may be remembered is narrow on purpose: only models that are ours, since a `wash app put`
// cannot make an owned model foreign and wadm announces every deploy and undeploy; never an
// absent or foreign model, which a put (announced by nothing) can change. Entries exist only for
// applications a hook call asked about: statuses wadm publishes for others are not kept, so they
// cannot push ours out. A lattice whose subscriptions are down (refused, or dropped while idle)
// has nothing remembered: the events that keep memory true would go unseen.
import type { LatticeStatus, ModelFacts, StatusFacts, VersionFacts } from '../core/facts.js';
import { olderSizes } from '../core/budget.js';
import { Lru } from '../plumbing/lru.js';
import { lean } from './lean-status.js';

export interface KnowledgeOptions {
  /** Applications remembered. */
  capacity: number;
  /** A remembered model is asked again after this long even without an event. */
  modelTtlMs: number;
  /**
   * wadm publishes a status only when it changes, so a deploy that changes nothing wadm reports
   * (say, only an annotation) is followed by no message at all. After this long the latest
   * status is taken to describe the deployed version.
   */
  deployGraceMs: number;
  /** Remembered facts of a lattice are used only while its wadm answered within this time. */
  livenessMs: number;
  /**
   * A remembered model is used only while it was read, or its lattice listed (checked()), within
   * this time: wadm can lose its store and start again empty without a word (core/census.ts).
   * Absent: only the TTL bounds it (no list is asked for).
   */
  checkPeriodMs?: number;
  now: () => number;
}

/**
 * Always all four fields, built by entryOf(): an object made by spreading another and adding a
 * field gets a hidden class of its own in V8, ~1 KiB per application when thousands are kept.
 */
interface Entry {
  model: { facts: ModelFacts; readAt: number } | undefined;
  /** `heardAt`: when its message arrived on wadm's status stream; undefined for a status read (published when, unknown). */
  status: { status: LatticeStatus; seq: number; heardAt: number | undefined } | undefined;
  /** Our deploy wadm acknowledged: when in this replica's order, when on the clock, and of which version (when the caller said). */
  deploy: { seq: number; at: number; version: string | undefined } | undefined;
  /** The version wadm last announced deploying (anyone's deploy, on its event stream), and when in this replica's order. */
  announced: { version: string; seq: number } | undefined;
  /** Sequence number of the last event that made the model unknown. */
  forgotAt: number;
  /**
   * Sizes of the model's versions but the newest (which every model read returns): a version's
   * content never changes while it exists, so this outlives the model's own facts, and spares an
   * edit one read per kept version when budgeting the model's stored size.
   */
  sizes: Readonly<Record<string, number>> | undefined;
  /**
   * The facts of the model's oldest version, read by a call of ours: its owner annotation says
   * whose the model is (core/ownership.ts). wadm appends every put, so a version listed first
   * stays first while it exists, and its content never changes: an edit's fresh read is spared
   * reading it again. Void once a read finds no model (absent()): whoever puts first next owns it.
   */
  origin: VersionFacts | undefined;
}

const NOTHING: Entry = {
  model: undefined,
  status: undefined,
  deploy: undefined,
  announced: undefined,
  forgotAt: 0,
  sizes: undefined,
  origin: undefined,
};

function entryOf(previous: Entry, change: Partial<Entry>): Entry {
  return {
    model: 'model' in change ? change.model : previous.model,
    status: 'status' in change ? change.status : previous.status,
    deploy: 'deploy' in change ? change.deploy : previous.deploy,
    announced: 'announced' in change ? change.announced : previous.announced,
    forgotAt: change.forgotAt ?? previous.forgotAt,
    sizes: 'sizes' in change ? change.sizes : previous.sizes,
    origin: 'origin' in change ? change.origin : previous.origin,
  };
}

export class Knowledge {
  private readonly entries: Lru<string, Entry>;
  private readonly answeredAt = new Map<string, number>();
  /** answeredAt's size after its last sweep: the next one comes when it has doubled. */
  private answeredAfterSweep = 64;
  private seq = 0;
  /** Sequence number of the last reset (a new NATS connection: anything may have been missed). */
  private resetAt = 0;
  /** Lattices whose subscriptions are down: nothing of them is remembered. */
  private readonly unwatched = new Set<string>();
  /** When each lattice's list last confirmed what is remembered of its models (checked()). */
  private readonly checkedAt = new Map<string, number>();

  constructor(private readonly options: KnowledgeOptions) {
    this.entries = new Lru(options.capacity);
  }

  get size(): number {
    return this.entries.size;
  }

  get evictions(): number {
    return this.entries.evictions;
  }

  /** Lattices whose last answer is remembered: bounded by the liveness window, not by the applications. */
  get latticesAnswered(): number {
    return this.answeredAt.size;
  }

  /** wadm of this lattice answered a request. */
  answered(lattice: string): void {
    this.answeredAt.set(lattice, this.options.now());
    // Reads of keys through other lattices (collisions.ts) add lattices no application is in:
    // drop the answers older than the liveness window, which no check reads.
    if (this.answeredAt.size >= 2 * this.answeredAfterSweep) this.sweepAnswered();
  }

  private sweepAnswered(): void {
    const now = this.options.now();
    for (const [lattice, at] of this.answeredAt) if (now - at >= this.options.livenessMs) this.answeredAt.delete(lattice);
    this.answeredAfterSweep = Math.max(64, this.answeredAt.size);
  }

  isAlive(lattice: string): boolean {
    const at = this.answeredAt.get(lattice);
    return at !== undefined && this.options.now() - at < this.options.livenessMs;
  }

  /** The remembered model, marked as such, while within its TTL and confirmed within the check period. */
  model(lattice: string, name: string): ModelFacts | undefined {
    const model = this.usable(lattice, this.entries.get(key(lattice, name)));
    return model && { ...model.facts, remembered: true };
  }

  /** A model is remembered within its TTL, but neither read nor listed within the check period: list the lattice first. */
  needsCheck(lattice: string, name: string): boolean {
    const model = this.unwatched.has(lattice) ? undefined : this.entries.get(key(lattice, name))?.model;
    return model !== undefined && this.withinTtl(model) && !this.confirmed(lattice, model);
  }

  /** The models remembered in this lattice within their TTL, by name: what its list is compared with. */
  remembered(lattice: string): Map<string, ModelFacts> {
    const models = new Map<string, ModelFacts>();
    if (this.unwatched.has(lattice)) return models;
    const prefix = `${lattice}/`;
    for (const [k, entry] of this.entries.entries())
      if (k.startsWith(prefix) && entry.model && this.withinTtl(entry.model)) models.set(k.slice(prefix.length), entry.model.facts);
    return models;
  }

  /**
   * The lattice was listed when `at` (before the list was sent): the models it contradicts are
   * forgotten, the others are confirmed as of then.
   */
  checked(lattice: string, at: number, contradicted: readonly string[]): void {
    for (const name of contradicted) this.forgetModel(lattice, name);
    if (!this.unwatched.has(lattice)) this.checkedAt.set(lattice, Math.max(at, this.checkedAt.get(lattice) ?? at));
  }

  /**
   * A read found no model: the status, deploy and announcement remembered of it speak of a model
   * wadm no longer has (its store may have been lost), never of the one a put and deploy make next.
   */
  absent(lattice: string, name: string): void {
    const k = key(lattice, name);
    const entry = this.entries.get(k);
    if (entry && (entry.status || entry.deploy || entry.announced || entry.origin))
      this.entries.set(k, entryOf(entry, { status: undefined, deploy: undefined, announced: undefined, origin: undefined }));
  }

  private usable(lattice: string, entry: Entry | undefined): Entry['model'] {
    if (this.unwatched.has(lattice) || !entry?.model) return undefined;
    return this.withinTtl(entry.model) && this.confirmed(lattice, entry.model) ? entry.model : undefined;
  }

  private withinTtl(model: NonNullable<Entry['model']>): boolean {
    return this.options.now() - model.readAt < this.options.modelTtlMs;
  }

  /** Read, or its lattice listed, within the check period. */
  private confirmed(lattice: string, model: NonNullable<Entry['model']>): boolean {
    const since = Math.max(model.readAt, this.checkedAt.get(lattice) ?? model.readAt);
    return this.options.now() - since < (this.options.checkPeriodMs ?? Infinity);
  }

  /** A point to compare against in remember(): events after it make what was read stale. */
  checkpoint(): number {
    return this.seq;
  }

  /**
   * Keeps a model read (or written) since `checkpoint`, unless an event has made it stale since,
   * and its versions' sizes in any case; undefined forgets the model, null the sizes too (the model
   * is gone, or not ours).
   */
  remember(lattice: string, name: string, model: ModelFacts | null | undefined, checkpoint: number): void {
    const k = key(lattice, name);
    const entry = this.entries.get(k);
    if (!model) {
      const change = model === null ? { model: undefined, sizes: undefined, origin: undefined } : { model: undefined };
      if (entry && (entry.model || (model === null && (entry.sizes || entry.origin)))) this.entries.set(k, entryOf(entry, change));
      return;
    }
    const stale = (entry?.forgotAt ?? 0) > checkpoint || this.resetAt > checkpoint || this.unwatched.has(lattice);
    const { remembered: _remembered, sizes: _sizes, ...facts } = model;
    const kept = stale ? undefined : { facts, readAt: this.options.now() };
    const sizes = olderSizes(model);
    const origin = originOf(model) ?? entry?.origin;
    if (!kept && !entry?.model && sizes === undefined && entry?.sizes === undefined && origin === undefined) return;
    this.entries.set(k, entryOf(entry ?? NOTHING, { model: kept, sizes, origin }));
  }

  /** A call read sizes before wadm stopped answering: the model is forgotten, its versions' sizes kept. */
  rememberSizes(lattice: string, name: string, model: ModelFacts): void {
    const k = key(lattice, name);
    const entry = this.entries.get(k);
    if (entry === undefined || this.unwatched.has(lattice)) return;
    this.entries.set(
      k,
      entryOf(entry, { model: undefined, sizes: olderSizes(model) ?? entry.sizes, origin: originOf(model) ?? entry.origin }),
    );
  }

  /** The facts of the oldest version of a model of ours, as a call of ours read them. */
  origin(lattice: string, name: string): VersionFacts | undefined {
    return this.entries.get(key(lattice, name))?.origin;
  }

  /** What this replica knows of the sizes of a model's versions (but the newest). */
  sizes(lattice: string, name: string): Readonly<Record<string, number>> | undefined {
    return this.entries.get(key(lattice, name))?.sizes;
  }

  /** A hook call asks about this application: from now on wadm's status messages for it are kept. */
  manage(lattice: string, name: string): void {
    const k = key(lattice, name);
    if (!this.unwatched.has(lattice) && this.entries.get(k) === undefined) this.entries.set(k, NOTHING);
  }

  /** The lattice's subscriptions are down (or up again): its knowledge goes, and none is kept meanwhile. */
  watching(lattice: string, up: boolean): void {
    if (up) return void this.unwatched.delete(lattice);
    this.unwatched.add(lattice);
    this.checkedAt.delete(lattice);
    const prefix = `${lattice}/`;
    for (const k of this.entries.keys()) if (k.startsWith(prefix)) this.entries.delete(k);
  }

  /**
   * wadm announced a deploy (of `deployed`) or an undeploy of this application (ours or anyone's).
   * A status heard after the announcement of a deploy is about that version: core/evidence.ts.
   */
  forgetModel(lattice: string, name: string, deployed?: string): void {
    const k = key(lattice, name);
    const seq = ++this.seq;
    const announced = deployed === undefined ? undefined : { version: deployed, seq };
    this.entries.set(k, entryOf(this.entries.get(k) ?? NOTHING, { model: undefined, forgotAt: seq, announced }));
  }

  forgetLattice(lattice: string): void {
    for (const k of this.entries.keys()) if (k.startsWith(`${lattice}/`)) this.forgetModel(lattice, k.slice(lattice.length + 1));
  }

  /** A new NATS connection: messages may have been missed while disconnected. */
  reset(): void {
    this.entries.clear();
    this.answeredAt.clear();
    this.checkedAt.clear();
    this.resetAt = ++this.seq;
  }

  status(lattice: string, name: string): StatusFacts | undefined {
    if (this.unwatched.has(lattice)) return undefined;
    const entry = this.entries.get(key(lattice, name));
    return entry?.status && this.statusFacts(entry.status, entry);
  }

  /**
   * A status from model.status (we cannot tell when wadm published it) or from the stream, which
   * only updates applications a hook call asked about (manage()).
   */
  rememberStatus(lattice: string, name: string, status: LatticeStatus, fromStream: boolean): StatusFacts {
    const k = key(lattice, name);
    const before = this.entries.get(k);
    const heardAt = fromStream ? this.options.now() : undefined;
    const kept = { status: lean(status), seq: ++this.seq, heardAt };
    if ((before !== undefined || !fromStream) && !this.unwatched.has(lattice))
      this.entries.set(k, entryOf(before ?? NOTHING, { status: kept }));
    return this.statusFacts(kept, before ?? NOTHING);
  }

  /** wadm acknowledged our deploy (of `version`): statuses published before it are about the previous version. Returns when. */
  deployed(lattice: string, name: string, version?: string): number {
    const k = key(lattice, name);
    const at = this.options.now();
    this.entries.set(k, entryOf(this.entries.get(k) ?? NOTHING, { deploy: { seq: ++this.seq, at, version } }));
    return at;
  }

  /**
   * Everything an answer about this application may depend on, as one object identity: the same
   * object means nothing known changed. Undefined while the lattice's wadm has not answered within
   * livenessMs or no model is remembered that may be used (model()): an answer then needs wadm,
   * and so would its reuse.
   */
  stamp(lattice: string, name: string): object | undefined {
    const entry = this.entries.get(key(lattice, name));
    return this.usable(lattice, entry) && this.isAlive(lattice) ? entry : undefined;
  }

  /** The status, and how it stands to this replica's own deploy and to wadm's announcements (core/evidence.ts weighs it). */
  private statusFacts({ status, seq, heardAt }: NonNullable<Entry['status']>, { deploy, announced }: Entry): StatusFacts {
    const facts: StatusFacts = { status, predatesDeploy: false };
    if (heardAt !== undefined) facts.heardAt = heardAt;
    if (heardAt !== undefined && announced !== undefined && seq > announced.seq) facts.followsDeployOf = announced.version;
    // Known here before a deploy was acknowledged or announced: wadm published it before that deploy.
    const ours = deploy !== undefined && deploy.seq > seq ? deploy : undefined;
    const theirs = announced !== undefined && announced.seq > seq ? announced : undefined;
    const latest = ours && theirs ? (ours.seq > theirs.seq ? ours : theirs) : (ours ?? theirs);
    if (latest?.version !== undefined) facts.precedesDeployOf = latest.version;
    if (!deploy) return facts;
    if (heardAt !== undefined && seq > deploy.seq) facts.followsOwnDeploy = true;
    else if (this.options.now() - deploy.at <= this.options.deployGraceMs) facts.predatesDeploy = true;
    return facts;
  }
}

function key(lattice: string, name: string): string {
  return `${lattice}/${name}`;
}

/** The oldest version's facts, when the call read them. */
function originOf(model: ModelFacts): VersionFacts | undefined {
  const oldest = model.versions[0];
  return oldest !== undefined && Object.hasOwn(model.known, oldest) ? model.known[oldest] : undefined;
}
