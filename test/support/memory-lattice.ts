// An in-memory lattice at the level of the core's actions (no NATS, no wire format): lets unit
// tests run whole sync/finalize calls through the real step loop and inspect what changed.
import type { Call } from '../../src/core/application.js';
import type { Step } from '../../src/core/decide.js';
import type { Action, ActionResult, LatticeFacts, LatticeStatus, StatusFacts } from '../../src/core/facts.js';
import { runSteps, type Run } from '../../src/core/steps.js';
import type { HostsView } from '../../src/core/lattice-hosts.js';

interface StoredVersion {
  owner: string | null;
  contentHash: string | null;
  /** The manifest's size, as wadm would store it (the put body's, here). */
  bytes?: number;
  /** `metadata.name`, when a test gives it: another lattice's version under a shared key (a put's is its body's). */
  name?: string;
}

interface Model {
  versions: Map<string, StoredVersion>;
  deployed: string | null;
}

const STORAGE_ERROR: ActionResult = { kind: 'unavailable', reason: 'StorageError', message: 'Internal storage error' };

export class MemoryLattice {
  readonly models = new Map<string, Model>();
  readonly statuses = new Map<string, StatusFacts>();
  /** Every put body, by version. */
  readonly bodies = new Map<string, string>();
  /** Set to make every action fail as if NATS were down. */
  down = false;
  /**
   * Set to make wadm's store unreadable (a JetStream leader election, a NATS failover): every
   * request but a status read gets wadm's `Internal storage error`, as the real wadm answers then
   * (a read-key gets what the gateway makes of it).
   */
  storeUnreadable = false;
  /** Names whose key holds another lattice's index: wadm cannot read it as a model, ever. */
  readonly keysHoldingIndex = new Set<string>();
  /** The hosts heard in the lattice, as the shell's HostRegistry gives them; null: nobody listens. */
  hosts: HostsView | null = null;
  /** Results to return instead of performing the next actions of a kind, oldest first. */
  readonly scripted: { kind: Action['kind']; result: ActionResult }[] = [];

  model(name: string): Model | undefined {
    return this.models.get(name);
  }

  /** A model written by someone else, e.g. `wash app deploy`. */
  seed(name: string, versions: [string, StoredVersion][], deployed: string | null = null): void {
    this.models.set(name, { versions: new Map(versions), deployed });
  }

  /**
   * wadm published this status, and this replica heard it: after its own deploy (evidence that it
   * describes the deployed version, core/evidence.ts), or, with `predatesDeploy`, before it.
   */
  setStatus(name: string, status: LatticeStatus, predatesDeploy = false): void {
    this.statuses.set(name, predatesDeploy ? { status, predatesDeploy } : { status, predatesDeploy, followsOwnDeploy: true });
  }

  /** The Lattice interface of src/sync.ts; the lattice id is recorded, not used. */
  readonly lattices: string[] = [];
  perform(lattice: string, name: string, action: Action): Promise<ActionResult> {
    this.lattices.push(lattice);
    return Promise.resolve(this.performSync(name, action));
  }

  run(decide: (call: Call, facts: LatticeFacts) => Step, call: Call): Promise<Run> {
    return runSteps(decide, call, (action) => Promise.resolve(this.performSync(call.app.ref.name, action)));
  }

  /** Lattices the application was in before (actions with a `lattice`): empty unless a test seeds them. */
  readonly elsewhere = new Map<string, MemoryLattice>();

  performSync(name: string, action: Action): ActionResult {
    if (action.lattice !== undefined) {
      const { lattice, ...here } = action;
      if (!this.elsewhere.has(lattice)) this.elsewhere.set(lattice, new MemoryLattice());
      return this.elsewhere.get(lattice)!.performSync(name, here as Action);
    }
    const scripted = this.scripted.findIndex((s) => s.kind === action.kind);
    if (scripted >= 0) return this.scripted.splice(scripted, 1)[0]!.result;
    if (this.down) return { kind: 'unavailable', reason: 'NoResponders', message: 'no responders' };
    // A read-key's storage error is what an index gives: the gateway answers it as one.
    if (this.storeUnreadable && action.kind === 'read-key')
      return { kind: 'key', key: `${action.key.lattice}-${action.key.name}`, holds: 'index' };
    if (this.storeUnreadable && action.kind !== 'read-status') return STORAGE_ERROR;
    const model = this.models.get(name);
    switch (action.kind) {
      case 'read-model':
        if (this.keysHoldingIndex.has(name)) return STORAGE_ERROR;
        return { kind: 'model', model: model ? this.facts(model) : null };
      case 'read-version': {
        const stored = model?.versions.get(action.version);
        return { kind: 'version', version: action.version, facts: stored ? { version: action.version, ...stored } : null };
      }
      case 'read-key':
        // No other lattice's model sits where this lattice's index goes.
        return { kind: 'key', key: `${action.key.lattice}-${action.key.name}`, holds: 'nothing' };
      case 'read-list':
        return { kind: 'listed', any: (this.elsewhere.get(action.of)?.models.size ?? 0) > 0 };
      case 'read-hosts':
        return { kind: 'hosts', hosts: this.hosts };
      case 'read-summary': {
        // As the lattice's list: the newest and the deployed version (its status is read apart here).
        const newest = model ? [...model.versions.keys()].at(-1)! : undefined;
        return { kind: 'summary', summary: newest === undefined ? null : { version: newest, deployed: model!.deployed } };
      }
      case 'read-status':
        return { kind: 'status', status: this.statuses.get(name) ?? { status: { status: { type: 'undeployed' } }, predatesDeploy: false } };
      case 'put': {
        if (model?.versions.has(action.version)) return { kind: 'stale' };
        const target = model ?? { versions: new Map(), deployed: null };
        const stored = (JSON.parse(action.body) as { metadata?: { name?: unknown } }).metadata?.name;
        const named = typeof stored === 'string' ? { name: stored } : {};
        target.versions.set(action.version, { owner: action.owner, contentHash: action.contentHash, bytes: action.bytes, ...named });
        this.bodies.set(action.version, action.body);
        this.models.set(name, target);
        // As wadm: the count of versions the model holds after the put.
        return { kind: 'done', versions: target.versions.size };
      }
      case 'deploy':
        if (!model?.versions.has(action.version)) return { kind: 'stale' };
        model.deployed = action.version;
        this.statuses.set(name, {
          status: { status: { type: 'reconciling', message: 'Scaling component on 1 host(s)' } },
          predatesDeploy: true,
        });
        return { kind: 'done' };
      case 'undeploy':
        if (!model) return { kind: 'stale' };
        model.deployed = null;
        return { kind: 'done' };
      case 'delete':
        if (!model) return { kind: 'done' };
        if (action.version === null) this.models.delete(name);
        else {
          model.versions.delete(action.version);
          if (model.deployed === action.version) model.deployed = null;
          if (model.versions.size === 0) this.models.delete(name);
        }
        return { kind: 'done' };
    }
  }

  private facts(model: Model) {
    const versions = [...model.versions.keys()];
    const latest = versions[versions.length - 1]!;
    const stored = model.versions.get(latest)!;
    // As the gateway: the newest manifest's name, when known, comes with every model read.
    const named = stored.name === undefined ? {} : { storedName: stored.name };
    return { versions, deployedVersion: model.deployed, known: { [latest]: { version: latest, ...stored } }, ...named };
  }
}

/** Several in-memory lattices, one per name: for applications that move between lattices. */
export class MemoryLattices {
  private readonly byName = new Map<string, MemoryLattice>();
  /** Every action performed, with the lattice it went to. */
  readonly performed: { lattice: string; action: Action }[] = [];

  of(lattice: string): MemoryLattice {
    let memory = this.byName.get(lattice);
    if (!memory) this.byName.set(lattice, (memory = new MemoryLattice()));
    return memory;
  }

  /**
   * The Lattice interface of src/sync.ts: an action for a former lattice goes to that
   * lattice; a list read asks the lattice it lists, through the wadm of the one that sent it.
   */
  perform(lattice: string, name: string, action: Action): Promise<ActionResult> {
    this.performed.push({ lattice, action });
    const { lattice: _former, ...here } = action;
    if (here.kind === 'read-list' && !this.of(lattice).storeUnreadable && !this.of(lattice).down)
      return Promise.resolve({ kind: 'listed', any: this.of(here.of).models.size > 0 });
    return this.of(lattice).perform(lattice, name, here as Action);
  }

  run(decide: (call: Call, facts: LatticeFacts) => Step, call: Call): Promise<Run> {
    return runSteps(decide, call, (action) => this.perform(action.lattice ?? call.app.lattice, call.app.ref.name, action));
  }
}
