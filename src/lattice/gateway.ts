// Performs the core's actions against wadm for one application and reports the results in the
// core's terms. Everything wadm- and NATS-specific about an action lives here, and so does the
// rule for using what Knowledge remembers: only while connected, only while the lattice's wadm has
// answered within the liveness window (else one shared probe asks it first), and only while the
// model was read or its lattice listed within the check period (else one shared list asks first:
// census.ts).
import { modelKey, type ModelName } from '../core/collisions.js';
import type { Action, ActionResult, KeyHolds, ModelFacts, ModelSummary, VersionFacts } from '../core/facts.js';
import { namedByContent } from '../core/manifest.js';
import { CONTENT_HASH_ANNOTATION, OWNER_ANNOTATION } from '../core/names.js';
import { WadmUnavailableError } from './errors.js';
import type { LatticeCensus } from './census.js';
import type { Knowledge } from './knowledge.js';
import type { LatticeWatch } from './watch.js';
import type { HostRegistry } from './hosts.js';
import type { WadmClient, WriteOutcome } from './wadm-client.js';

/** Lattices whose index key is known to hold an index: more are forgotten, not kept without bound. */
const MAX_INDEXES_KNOWN = 10_000;

export class LatticeGateway {
  /**
   * Lattices whose index key holds their index. wadm never deletes an index once written, and a
   * model can then never be put under that key (wadm cannot read it as one): a fact for good, so
   * each lattice's first put pays for the read-key once per process, not once per application.
   */
  private readonly indexed = new Set<string>();

  constructor(
    private readonly client: WadmClient,
    private readonly knowledge: Knowledge,
    private readonly watch: LatticeWatch,
    private readonly census: LatticeCensus,
    private readonly isConnected: () => boolean,
    /** A read-key NATS refused, answered from the lattice's own list instead: said once per lattice. */
    private readonly onKeyReadRefused: (lattice: string, message: string) => void = () => undefined,
    /** The hosts heard per lattice (those a WasmCloudLattice listens to). */
    private readonly hosts?: Pick<HostRegistry, 'peek'>,
  ) {}

  async perform(lattice: string, name: string, action: Action): Promise<ActionResult> {
    try {
      // Nothing remembered is worth anything while NATS is down: wadm may be changing meanwhile.
      if (!this.isConnected()) throw new WadmUnavailableError('Disconnected', 'not connected to NATS');
      return await this.attempt(lattice, name, action);
    } catch (err) {
      if (!(err instanceof WadmUnavailableError)) throw err;
      this.knowledge.remember(lattice, name, undefined, Infinity);
      return { kind: 'unavailable', reason: err.reason, message: err.message };
    }
  }

  private async attempt(lattice: string, name: string, action: Action): Promise<ActionResult> {
    switch (action.kind) {
      case 'read-model':
        // Subscribe before any write, so that status published after our deploy is seen (not for
        // a lattice the application left: it is only cleaned up there).
        if (action.lattice === undefined) {
          this.watch.watch(lattice);
          this.knowledge.manage(lattice, name);
        }
        return {
          kind: 'model',
          model: await this.readModel(lattice, name, action.fresh === true, action.deployed === undefined ? [] : [action.deployed]),
        };
      case 'read-summary': {
        const first = !this.knowledge.knows(lattice, name);
        this.watch.watch(lattice);
        this.knowledge.manage(lattice, name);
        return { kind: 'summary', summary: await this.summary(lattice, name, first) };
      }
      case 'read-version': {
        const read = await this.client.metadata(lattice, name, action.version);
        return { kind: 'version', version: action.version, facts: read && versionFacts(action.version, read) };
      }
      case 'read-key':
        return { kind: 'key', key: modelKey(action.key), holds: await this.keyHolds(action.key) };
      case 'read-hosts':
        return { kind: 'hosts', hosts: this.hosts?.peek(lattice) ?? null };
      case 'read-list':
        // Only whether it lists anything: the names of another lattice's applications stay here.
        return { kind: 'listed', any: (await this.client.list(action.of)).length > 0 };
      case 'read-status': {
        const known = this.knowledge.status(lattice, name);
        return {
          kind: 'status',
          status: known ?? this.knowledge.rememberStatus(lattice, name, await this.client.status(lattice, name), false),
        };
      }
      case 'put': {
        const outcome = await this.client.put(lattice, action.body);
        if (outcome.kind === 'created') {
          this.indexHolds(lattice);
          return outcome.versions === undefined ? { kind: 'done' } : { kind: 'done', versions: outcome.versions };
        }
        return outcome.kind === 'exists' ? { kind: 'stale' } : outcome;
      }
      case 'deploy': {
        const outcome = await this.client.deploy(lattice, name, action.version);
        if (outcome.kind === 'done') return { kind: 'done', at: this.knowledge.deployed(lattice, name, action.version) };
        return writeResult(outcome);
      }
      case 'undeploy':
        return writeResult(await this.client.undeploy(lattice, name));
      case 'delete':
        return writeResult(await this.client.delete(lattice, name, action.version));
    }
  }

  /**
   * What a key holds, read through a model name that maps to it. When NATS refuses that name's
   * lattice, the key is a lattice's index key (the core reads keys only to learn that), so its
   * own lattice's list tells instead: a list shows the key holds no model. The list grows with
   * the lattice: SECURITY.md says which subject spares it.
   */
  private async keyHolds(reader: ModelName): Promise<KeyHolds> {
    const key = modelKey(reader);
    if (this.indexed.has(key)) return 'index';
    let holds: KeyHolds | 'unreadable';
    try {
      holds = await this.client.keyHolds(reader.lattice, reader.name);
    } catch (err) {
      if (!(err instanceof WadmUnavailableError && err.reason === 'NotPermitted')) throw err;
      this.onKeyReadRefused(key, err.message);
      holds = await this.listHolds(key);
    }
    // A storage error is what an index gives, and what a failing store gives: taken as no model
    // there, since the put it allows writes only our own key (read empty) and wadm then fails to
    // list it rather than overwrite anything; never remembered, since it shows nothing for good.
    if (holds === 'unreadable') return 'index';
    if (holds === 'index') this.indexHolds(key);
    return holds;
  }

  /** wadm could list the lattice, so its key holds no model; a failure shows nothing and is said so. */
  private async listHolds(lattice: string): Promise<KeyHolds> {
    try {
      return (await this.client.list(lattice)).length > 0 ? 'index' : 'nothing';
    } catch (err) {
      if (!(err instanceof WadmUnavailableError)) throw err;
      const unchecked = `whether wadm's key "${lattice}" (lattice "${lattice}"'s list of applications) holds another lattice's application could not be checked`;
      throw new WadmUnavailableError(err.reason, `${unchecked}: ${err.message}`);
    }
  }

  private indexHolds(lattice: string): void {
    if (this.indexed.size >= MAX_INDEXES_KNOWN) this.indexed.clear();
    this.indexed.add(lattice);
  }

  private async readModel(lattice: string, name: string, fresh: boolean, named?: readonly string[]): Promise<ModelFacts | null> {
    if (!fresh && this.knowledge.needsCheck(lattice, name)) await this.census.check(lattice);
    const remembered = fresh ? undefined : this.knowledge.model(lattice, name);
    if (remembered === undefined) return this.fetchModel(lattice, name, named);
    await this.confirmAlive(lattice);
    return remembered;
  }

  /**
   * What is remembered of a lattice is used only while its wadm answered lately: else one probe
   * (shared by the lattice's calls) asks first. A probe that waited behind other requests wadm
   * was answering says wadm is busy, not gone: what is remembered stays true (signs-of-life.ts).
   * A probe that fails otherwise throws, and the call answers LatticeUnavailable.
   */
  private async confirmAlive(lattice: string): Promise<void> {
    if (this.knowledge.isAlive(lattice)) return;
    // Taken as an answer for the liveness window: no further probe joins wadm's queue meanwhile.
    if ((await this.client.probe(lattice)) === 'busy') this.knowledge.answered(lattice);
  }

  /**
   * A summary of the model for a settled application (core/summary.ts): remembered, or its line of
   * the lattice's list kept from this period. On the application's first call in this replica (it
   * started, reconnected, or forgot it) the list is asked for (one request shared by the lattice),
   * or where the lattice cannot be listed, the model's versions; later calls read the model as
   * before (a list after every deploy would cost wadm more than the two reads it saves). Null where
   * a remembered model serves better, or nothing summarises it: the core then reads the model.
   */
  private async summary(lattice: string, name: string, first: boolean): Promise<ModelSummary | null> {
    if (this.knowledge.hasModel(lattice, name)) return null;
    if (this.knowledge.needsCheck(lattice, name)) await this.census.check(lattice);
    const remembered = this.knowledge.summary(lattice, name);
    if (remembered !== undefined) {
      await this.confirmAlive(lattice);
      return remembered;
    }
    const checkpoint = this.knowledge.checkpoint();
    if (first && !this.knowledge.listings.has(lattice) && !this.census.unlisted(lattice)) await this.census.check(lattice);
    const listed = this.knowledge.takeSummary(lattice, name);
    if (listed !== undefined || !first) return listed ?? null;
    const versions = await this.client.versions(lattice, name);
    const newest = versions?.at(-1);
    if (!versions || !newest) return null;
    const summary = { version: newest.version, deployed: versions.find((v) => v.deployed)?.version ?? null };
    this.knowledge.summarised(lattice, name, summary, checkpoint);
    return summary;
  }

  /**
   * The model's versions, and its newest version's facts. The versions the core names (the one the
   * resource's last answer found deployed, whose facts an edit needs) are read with the versions,
   * at once, where this replica does not know what they hold (another replica put them, or this
   * one restarted): one round trip to wadm fewer in a row, and no request more than the core would
   * make after the versions.
   */
  private async fetchModel(lattice: string, name: string, named: readonly string[] = []): Promise<ModelFacts | null> {
    const learnt = named.map((version) => ({ version, facts: this.learnt(lattice, name, version) }));
    const unknown = learnt.filter(({ facts }) => facts === undefined).map(({ version }) => version);
    const [versions, early] = await Promise.all([
      this.client.versions(lattice, name),
      Promise.all(unknown.map((version) => this.client.metadata(lattice, name, version))),
    ]);
    const newest = versions?.[versions.length - 1];
    if (!versions || !newest) return this.absent(lattice, name);
    // What was read just now first, then what was learnt before; only versions wadm still lists.
    const read = new Map<string, VersionFacts>();
    unknown.forEach((version, i) => early[i] && read.set(version, versionFacts(version, early[i])));
    for (const { version, facts } of learnt) if (facts !== undefined) read.set(version, facts);
    for (const version of read.keys()) if (!versions.some((v) => v.version === version)) read.delete(version);
    const newestFacts = read.get(newest.version) ?? (await this.newest(lattice, name, newest.version));
    // Deleted between the two requests: there is no model.
    if (newestFacts === null) return this.absent(lattice, name);
    // The oldest version, when a call of ours read it, is as it was (knowledge.ts origin).
    const origin = this.knowledge.origin(lattice, name);
    const remembered = origin !== undefined && origin.version === versions[0]!.version && origin.version !== newest.version;
    const model: ModelFacts = {
      versions: versions.map((v) => v.version),
      deployedVersion: versions.find((v) => v.deployed)?.version ?? null,
      known: { ...Object.fromEntries(read), [newest.version]: newestFacts, ...(remembered && { [origin.version]: origin }) },
      storedName: newestFacts.name ?? name,
    };
    const sizes = this.knowledge.sizes(lattice, name);
    return sizes ? { ...model, sizes } : model;
  }

  /**
   * The newest version's facts: read (the model's `get`), unless a call of ours already learnt them
   * and the version is named by the hash of its content (ours, unpinned), so holds what it held
   * then. An edit's fresh read is then its versions alone: one request fewer in a row before its
   * put. A version we put carries the name we put it under.
   */
  private async newest(lattice: string, name: string, version: string): Promise<VersionFacts | null> {
    const learnt = this.learnt(lattice, name, version);
    if (learnt !== undefined) return learnt;
    const metadata = await this.client.metadata(lattice, name);
    return metadata && versionFacts(version, metadata);
  }

  /**
   * What a call of ours learnt of this version (read or put), when it is named by the hash of its
   * content (ours, unpinned): while it exists it holds what it held then. It carries the name we
   * put it under.
   */
  private learnt(lattice: string, name: string, version: string): VersionFacts | undefined {
    const learnt = this.knowledge.versionFacts(lattice, name, version);
    if (learnt === undefined || !namedByContent(version, learnt.contentHash)) return undefined;
    return learnt.name === undefined ? { ...learnt, name } : learnt;
  }

  /** wadm has no such model: nothing it said of one before speaks of the next (knowledge.ts). */
  private absent(lattice: string, name: string): null {
    this.knowledge.absent(lattice, name);
    return null;
  }
}

function versionFacts(
  version: string,
  { name, annotations, bytes }: { name: string; annotations: Record<string, string>; bytes: number },
): VersionFacts {
  return { version, owner: annotations[OWNER_ANNOTATION] ?? null, contentHash: annotations[CONTENT_HASH_ANNOTATION] ?? null, bytes, name };
}

/** notfound: the model is not what we read a moment ago; the core reads it again. */
function writeResult(outcome: WriteOutcome): ActionResult {
  if (outcome.kind === 'notfound') return { kind: 'stale' };
  return outcome;
}
