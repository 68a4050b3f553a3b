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
//   - time: the lattice's wadm answered nothing within livenessMs (answered(), wiring/lattice.ts,
//     or its probe waited behind our answered requests, gateway.ts), the model was read over modelTtlMs ago, or
//     neither it was read nor its lattice listed within checkPeriodMs (checked());
//   - checked(): the lattice's list no longer shows the model as remembered (core/census.ts);
//   - takeSummary(), summarised(): a summary of a model not read (core/summary.ts);
//   - absent(): a read found no model: whatever wadm said of it before is void;
//   - capacity: the entry is evicted, least recently used first.
//
// A summary (newest and deployed version, from the lattice's list or the model's versions) is kept
// as a model is: within the TTL, confirmed each check period, forgotten by every event that forgets
// the model. The core answers from it only what the resource's own status attests.
//
// What may be remembered is narrow on purpose: only models that are ours, since a `wash app put`
// cannot make an owned model foreign and wadm announces every deploy and undeploy; never an
// absent or foreign model, which a put (announced by nothing) can change. Entries exist only for
// applications a hook call asked about: statuses wadm publishes for others are not kept, so they
// cannot push ours out. A lattice whose subscriptions are down (refused, or dropped while idle)
// has nothing remembered: the events that keep memory true would go unseen.
import type { ListedModel } from '../core/census.js';
import type { LatticeStatus, ModelFacts, ModelSummary, StatusFacts, VersionFacts } from '../core/facts.js';
import { olderSizes } from '../core/budget.js';
import { Lru } from '../plumbing/lru.js';
import { lean } from './lean-status.js';
import { entryOf, keepsVersionFacts, keptVersion, NO_VERSION_FACTS, NOTHING, versionFactsOf, type Entry } from './knowledge-entry.js';
import { ListLines } from './list-lines.js';
import { Liveness } from './liveness.js';

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

export class Knowledge {
  private readonly entries: Lru<string, Entry>;
  private readonly liveness: Liveness;
  private seq = 0;
  /** Sequence number of the last reset (a new NATS connection: anything may have been missed). */
  private resetAt = 0;
  /** Lattices whose subscriptions are down: nothing of them is remembered. */
  private readonly unwatched = new Set<string>();
  /** When each lattice's list last confirmed what is remembered of its models (checked()). */
  private readonly checkedAt = new Map<string, number>();
  /** Each lattice's last list, for the applications not yet summarised from it (takeSummary()). */
  readonly listings = new ListLines((at) => this.options.now() - at < (this.options.checkPeriodMs ?? Infinity));

  constructor(private readonly options: KnowledgeOptions) {
    this.entries = new Lru(options.capacity);
    this.liveness = new Liveness(options.livenessMs, options.now);
  }

  get size(): number {
    return this.entries.size;
  }

  get evictions(): number {
    return this.entries.evictions;
  }

  /** Lattices whose last answer is remembered (for /metrics). */
  get latticesAnswered(): number {
    return this.liveness.size;
  }

  /** wadm of this lattice answered a request. */
  answered(lattice: string): void {
    this.liveness.answered(lattice);
  }

  isAlive(lattice: string): boolean {
    return this.liveness.isAlive(lattice);
  }

  /** The remembered model, marked as such, while within its TTL and confirmed within the check period. */
  model(lattice: string, name: string): ModelFacts | undefined {
    const model = this.usable(lattice, this.entries.get(key(lattice, name)));
    return model && { ...model.facts, remembered: true };
  }

  /** A model (or summary) is remembered within its TTL, but neither read nor listed within the check period: list the lattice first. */
  needsCheck(lattice: string, name: string): boolean {
    const entry = this.unwatched.has(lattice) ? undefined : this.entries.get(key(lattice, name));
    const kept = entry?.model ?? entry?.summary;
    return kept !== undefined && this.withinTtl(kept) && !this.confirmed(lattice, kept);
  }

  /** The models (and summaries) remembered in this lattice within their TTL, by name: what its list is compared with. */
  remembered(lattice: string): Map<string, Pick<ModelFacts, 'versions' | 'deployedVersion'>> {
    const models = new Map<string, Pick<ModelFacts, 'versions' | 'deployedVersion'>>();
    if (this.unwatched.has(lattice)) return models;
    const prefix = `${lattice}/`;
    for (const [k, { model, summary }] of this.entries.entries()) {
      if (!k.startsWith(prefix)) continue;
      if (model && this.withinTtl(model)) models.set(k.slice(prefix.length), model.facts);
      else if (summary && this.withinTtl(summary))
        models.set(k.slice(prefix.length), { versions: [summary.facts.version], deployedVersion: summary.facts.deployed });
    }
    return models;
  }

  /** The summary remembered of a model this replica has not read, while within its TTL and confirmed within the check period. */
  summary(lattice: string, name: string): ModelSummary | undefined {
    return this.usableSummary(lattice, this.entries.get(key(lattice, name)))?.facts;
  }

  /** A hook call asked about this application since this replica started or forgot it. */
  knows(lattice: string, name: string): boolean {
    return this.entries.get(key(lattice, name)) !== undefined;
  }

  /** A model is remembered (usable or to be checked first): the model read, not a summary, serves its calls. */
  hasModel(lattice: string, name: string): boolean {
    return !this.unwatched.has(lattice) && this.entries.get(key(lattice, name))?.model !== undefined;
  }

  /** The lattice's list is about to be sent: returns the point events are compared with (listed()). */
  listStarted(lattice: string): number {
    this.listings.started(lattice);
    return this.seq;
  }

  /** The lattice's list, sent when `at` (listStarted() returned `seq`), kept for the applications with nothing remembered. */
  listed(lattice: string, models: readonly ListedModel[], at: number, seq: number): void {
    if (this.unwatched.has(lattice) || this.resetAt > seq) return this.listings.failed(lattice);
    const entry = (name: string) => this.entries.get(key(lattice, name));
    this.listings.store(lattice, models, at, seq, (name) => entry(name)?.model !== undefined || entry(name)?.summary !== undefined);
  }

  /** Its line of the lattice's list, kept as its summary (and status): undefined without a list of the period, null if unnamed. */
  takeSummary(lattice: string, name: string): ModelSummary | null | undefined {
    if (this.unwatched.has(lattice)) return undefined;
    const taken = this.listings.take(lattice, name);
    if (!taken) return taken;
    const k = key(lattice, name);
    const entry = this.entries.get(k) ?? NOTHING;
    if (entry.forgotAt > taken.seq) return null;
    const { facts, status } = taken.listed;
    const summary = { facts, readAt: taken.at };
    // A status this replica kept is as recent (it hears every change since), and may be evidence the list's is not (evidence.ts).
    const fresh = status && !entry.status ? { status: { status, seq: ++this.seq, heardAt: undefined } } : {};
    this.entries.set(k, entryOf(entry, { summary, ...fresh }));
    return facts;
  }

  /** A summary read for this application alone (its versions) since `checkpoint`, kept unless an event made it stale. */
  summarised(lattice: string, name: string, summary: ModelSummary, checkpoint: number): void {
    const k = key(lattice, name);
    const entry = this.entries.get(k);
    const stale = (entry?.forgotAt ?? 0) > checkpoint || this.resetAt > checkpoint || this.unwatched.has(lattice);
    if (!stale && entry?.model === undefined)
      this.entries.set(k, entryOf(entry ?? NOTHING, { summary: { facts: summary, readAt: this.options.now() } }));
  }

  private usableSummary(lattice: string, entry: Entry | undefined): Entry['summary'] {
    if (this.unwatched.has(lattice) || !entry?.summary) return undefined;
    return this.withinTtl(entry.summary) && this.confirmed(lattice, entry.summary) ? entry.summary : undefined;
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
    if (entry && (entry.status || entry.deploy || entry.announced || keepsVersionFacts(entry) || entry.summary))
      this.entries.set(
        k,
        entryOf(entry, { status: undefined, deploy: undefined, announced: undefined, summary: undefined, ...NO_VERSION_FACTS }),
      );
  }

  private usable(lattice: string, entry: Entry | undefined): Entry['model'] {
    if (this.unwatched.has(lattice) || !entry?.model) return undefined;
    return this.withinTtl(entry.model) && this.confirmed(lattice, entry.model) ? entry.model : undefined;
  }

  private withinTtl(model: { readAt: number }): boolean {
    return this.options.now() - model.readAt < this.options.modelTtlMs;
  }

  /** Read, or its lattice listed, within the check period. */
  private confirmed(lattice: string, model: { readAt: number }): boolean {
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
      const change =
        model === null
          ? { model: undefined, summary: undefined, sizes: undefined, ...NO_VERSION_FACTS }
          : { model: undefined, summary: undefined };
      if (entry && (entry.model || entry.summary || (model === null && (entry.sizes || keepsVersionFacts(entry)))))
        this.entries.set(k, entryOf(entry, change));
      return;
    }
    const stale = (entry?.forgotAt ?? 0) > checkpoint || this.resetAt > checkpoint || this.unwatched.has(lattice);
    const { remembered: _remembered, sizes: _sizes, ...facts } = model;
    const kept = stale ? undefined : { facts, readAt: this.options.now() };
    const sizes = olderSizes(model);
    const versions = versionFactsOf(model, entry);
    if (!kept && !entry?.model && sizes === undefined && entry?.sizes === undefined && versions.origin === undefined) return;
    // The model read supersedes any summary of it.
    this.entries.set(k, entryOf(entry ?? NOTHING, { model: kept, sizes, ...versions, summary: undefined }));
  }

  /**
   * A call read the model before wadm stopped answering: the model is forgotten; what stays true
   * of its versions while they exist is kept (their sizes, the oldest's facts, the newest's and the
   * deployed one's when named by their content). Else a retry reads them again, and with a slow
   * wadm every retry would spend its budget on those reads and none reach the write after them.
   */
  rememberSizes(lattice: string, name: string, model: ModelFacts): void {
    const k = key(lattice, name);
    const entry = this.entries.get(k);
    if (entry === undefined || this.unwatched.has(lattice)) return;
    this.entries.set(k, entryOf(entry, { model: undefined, sizes: olderSizes(model) ?? entry.sizes, ...versionFactsOf(model, entry) }));
  }

  /** What a call of ours last learnt of this version of the model (read or put), however long ago. */
  versionFacts(lattice: string, name: string, version: string): VersionFacts | undefined {
    const entry = this.entries.get(key(lattice, name));
    const known = entry?.model?.facts.known;
    if (known && Object.hasOwn(known, version)) return known[version];
    return entry && keptVersion(entry, version);
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
    this.listings.drop(lattice);
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
    this.listings.touched(lattice, name);
    this.entries.set(k, entryOf(this.entries.get(k) ?? NOTHING, { model: undefined, summary: undefined, forgotAt: seq, announced }));
  }

  forgetLattice(lattice: string): void {
    for (const k of this.entries.keys()) if (k.startsWith(`${lattice}/`)) this.forgetModel(lattice, k.slice(lattice.length + 1));
  }

  /** A new NATS connection: messages may have been missed while disconnected. */
  reset(): void {
    this.entries.clear();
    this.liveness.clear();
    this.checkedAt.clear();
    this.listings.clear();
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
    if (fromStream) this.listings.touched(lattice, name);
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
    return (this.usable(lattice, entry) || this.usableSummary(lattice, entry)) && this.isAlive(lattice) ? entry : undefined;
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
