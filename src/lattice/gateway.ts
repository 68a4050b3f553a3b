// Performs the core's actions against wadm for one application and reports the results in the
// core's terms. Everything wadm- and NATS-specific about an action lives here.
import type { Action, ActionResult, Write } from '../core/facts.js';
import { CONTENT_HASH_ANNOTATION, OWNER_ANNOTATION } from '../core/names.js';
import { WadmUnavailableError } from './errors.js';
import type { LatticeWatch } from './watch.js';
import type { ModelCache } from './model-cache.js';
import type { StatusCache } from './status-cache.js';
import type { WadmClient, WriteOutcome } from './wadm-client.js';
import type { ModelFacts, VersionFacts } from './wire.js';

export class LatticeGateway {
  constructor(
    private readonly client: WadmClient,
    private readonly statuses: StatusCache,
    private readonly models: ModelCache,
    private readonly watch: LatticeWatch,
  ) {}

  async perform(lattice: string, name: string, action: Action): Promise<ActionResult> {
    try {
      const result = await this.attempt(lattice, name, action);
      this.remember(lattice, name, action, result);
      return result;
    } catch (err) {
      this.models.forget(lattice, name);
      if (err instanceof WadmUnavailableError) return { kind: 'unavailable', reason: err.reason, message: err.message };
      throw err;
    }
  }

  /**
   * What an answer about this application was computed from, as object identities: equal
   * snapshots mean nothing known about the application changed. Undefined when the model is not
   * cached (an answer then needed wadm, and its reuse would need wadm too).
   */
  snapshot(lattice: string, name: string): unknown[] | undefined {
    const model = this.models.entry(lattice, name);
    return model === undefined ? undefined : [model, ...this.statuses.entriesOf(lattice, name)];
  }

  /** Keeps the model cache in step: our successful writes update it, surprises drop it. */
  private remember(lattice: string, name: string, action: Action, result: ActionResult): void {
    if (result.kind === 'done' && !action.kind.startsWith('read-')) this.models.wrote(lattice, name, action as Write);
    else if (result.kind === 'stale' || result.kind === 'rejected' || result.kind === 'unavailable') this.models.forget(lattice, name);
  }

  private async attempt(lattice: string, name: string, action: Action): Promise<ActionResult> {
    switch (action.kind) {
      case 'read-model':
        // Subscribe before any write, so that status published after our deploy is seen.
        this.watch.watch(lattice);
        return { kind: 'model', model: await this.readModel(lattice, name) };
      case 'read-version': {
        const annotations = await this.client.annotations(lattice, name, action.version);
        return { kind: 'version', version: action.version, facts: annotations && versionFacts(action.version, annotations) };
      }
      case 'read-status': {
        const cached = this.statuses.lookup(lattice, name);
        return { kind: 'status', status: cached ?? this.statuses.remember(lattice, name, await this.client.status(lattice, name)) };
      }
      case 'put': {
        const outcome = await this.client.put(lattice, action.body);
        if (outcome.kind === 'created') return { kind: 'done' };
        return outcome.kind === 'exists' ? { kind: 'stale' } : outcome;
      }
      case 'deploy': {
        const outcome = await this.client.deploy(lattice, name, action.version);
        if (outcome.kind === 'done') this.statuses.deployed(lattice, name);
        return writeResult(outcome);
      }
      case 'undeploy':
        return writeResult(await this.client.undeploy(lattice, name));
      case 'delete':
        return writeResult(await this.client.delete(lattice, name, action.version));
    }
  }

  private async readModel(lattice: string, name: string): Promise<ModelFacts | null> {
    const cached = this.models.get(lattice, name);
    if (cached !== undefined) return cached;
    const model = await this.fetchModel(lattice, name);
    this.models.read(lattice, name, model);
    return model;
  }

  private async fetchModel(lattice: string, name: string): Promise<ModelFacts | null> {
    const versions = await this.client.versions(lattice, name);
    const newest = versions?.[versions.length - 1];
    if (!versions || !newest) return null;
    const annotations = await this.client.annotations(lattice, name);
    // Deleted between the two requests: there is no model.
    if (annotations === null) return null;
    return {
      versions: versions.map((v) => v.version),
      deployedVersion: versions.find((v) => v.deployed)?.version ?? null,
      latest: versionFacts(newest.version, annotations),
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
