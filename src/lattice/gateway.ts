// Performs the core's actions against wadm for one application and reports the results in the
// core's terms. Everything wadm- and NATS-specific about an action lives here, and so does the
// rule for using what Knowledge remembers: only while connected, and only while the lattice's
// wadm has answered within the liveness window (else one shared probe asks it first).
import type { Action, ActionResult, ModelFacts, VersionFacts } from '../core/facts.js';
import { CONTENT_HASH_ANNOTATION, OWNER_ANNOTATION } from '../core/names.js';
import { WadmUnavailableError } from './errors.js';
import type { Knowledge } from './knowledge.js';
import type { LatticeWatch } from './watch.js';
import type { WadmClient, WriteOutcome } from './wadm-client.js';

export class LatticeGateway {
  constructor(
    private readonly client: WadmClient,
    private readonly knowledge: Knowledge,
    private readonly watch: LatticeWatch,
    private readonly isConnected: () => boolean,
  ) {}

  async perform(lattice: string, name: string, action: Action): Promise<ActionResult> {
    try {
      // Nothing remembered is worth anything while NATS is down: wadm may be changing meanwhile.
      if (!this.isConnected()) throw new WadmUnavailableError('Disconnected', 'not connected to NATS');
      return await this.attempt(lattice, name, action);
    } catch (err) {
      if (!(err instanceof WadmUnavailableError)) throw err;
      this.knowledge.remember(lattice, name, undefined, Infinity);
      if (err.reason !== 'StorageError') return { kind: 'unavailable', reason: err.reason, message: err.message };
      this.knowledge.storageFailed(lattice);
      // Another lattice answered lately, or the store answers a read now: the trouble is this lattice's.
      const isolated = this.knowledge.healthyElsewhere(lattice) || (await this.client.storeWorks());
      return { kind: 'unavailable', reason: err.reason, message: err.message, isolated };
    }
  }

  private async attempt(lattice: string, name: string, action: Action): Promise<ActionResult> {
    switch (action.kind) {
      case 'read-model':
        // Subscribe before any write, so that status published after our deploy is seen.
        this.watch.watch(lattice);
        return { kind: 'model', model: await this.readModel(lattice, name, action.fresh === true) };
      case 'read-version': {
        const annotations = await this.client.annotations(lattice, name, action.version);
        return { kind: 'version', version: action.version, facts: annotations && versionFacts(action.version, annotations) };
      }
      case 'read-index':
        return { kind: 'index', lattice: action.lattice, models: await this.indexSize(action.lattice) };
      case 'read-status': {
        const known = this.knowledge.status(lattice, name);
        return { kind: 'status', status: known ?? this.knowledge.rememberStatus(lattice, name, await this.client.status(lattice, name), false) };
      }
      case 'put': {
        const outcome = await this.client.put(lattice, action.body);
        if (outcome.kind === 'created') return { kind: 'done' };
        return outcome.kind === 'exists' ? { kind: 'stale' } : outcome;
      }
      case 'deploy': {
        const outcome = await this.client.deploy(lattice, name, action.version);
        if (outcome.kind === 'done') this.knowledge.deployed(lattice, name);
        return writeResult(outcome);
      }
      case 'undeploy':
        return writeResult(await this.client.undeploy(lattice, name));
      case 'delete':
        return writeResult(await this.client.delete(lattice, name, action.version));
    }
  }

  /**
   * null when wadm cannot parse this lattice's index: asked only after wadm answered our own
   * model's read, so its storage works and this one key holds something else.
   */
  private async indexSize(lattice: string): Promise<number | null> {
    try {
      return await this.client.models(lattice);
    } catch (err) {
      if (err instanceof WadmUnavailableError && err.reason === 'StorageError') return null;
      throw err;
    }
  }

  private async readModel(lattice: string, name: string, fresh: boolean): Promise<ModelFacts | null> {
    const remembered = fresh ? undefined : this.knowledge.model(lattice, name);
    if (remembered === undefined) return this.fetchModel(lattice, name);
    if (!this.knowledge.isAlive(lattice)) await this.client.probe(lattice);
    return remembered;
  }

  private async fetchModel(lattice: string, name: string): Promise<ModelFacts | null> {
    const versions = await this.client.versions(lattice, name);
    const newest = versions?.[versions.length - 1];
    if (!versions || !newest) return null;
    const metadata = await this.client.metadata(lattice, name);
    // Deleted between the two requests: there is no model.
    if (metadata === null) return null;
    return {
      versions: versions.map((v) => v.version),
      deployedVersion: versions.find((v) => v.deployed)?.version ?? null,
      known: { [newest.version]: versionFacts(newest.version, metadata.annotations) },
      storedName: metadata.name,
    };
  }
}

function versionFacts(version: string, annotations: Record<string, string>): VersionFacts {
  return { version, owner: annotations[OWNER_ANNOTATION] ?? null, contentHash: annotations[CONTENT_HASH_ANNOTATION] ?? null };
}

/** notfound: the model is not what we read a moment ago; the core reads it again. */
function writeResult(outcome: WriteOutcome): ActionResult {
  if (outcome.kind === 'notfound') return { kind: 'stale' };
  return outcome;
}
