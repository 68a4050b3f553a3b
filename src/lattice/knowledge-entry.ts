// What Knowledge keeps of one application: one object, replaced (never mutated) on every change,
// so that its identity says "nothing changed" (knowledge.ts stamp()).
import type { LatticeStatus, ModelFacts, ModelSummary, VersionFacts } from '../core/facts.js';
import { namedByContent } from '../core/manifest.js';

/**
 * Always every field, built by entryOf(): an object made by spreading another and adding a
 * field gets a hidden class of its own in V8, ~1 KiB per application when thousands are kept.
 */
export interface Entry {
  model: { facts: ModelFacts; readAt: number } | undefined;
  /** `heardAt`: when its message arrived on wadm's status stream; undefined for a status read (published when, unknown). */
  status: { status: LatticeStatus; seq: number; heardAt: number | undefined } | undefined;
  /** Our deploy wadm acknowledged: when in this replica's order, when on the clock, and of which version (when the caller said). */
  deploy: { seq: number; at: number; version: string | undefined } | undefined;
  /** The version wadm last announced deploying (anyone's deploy, on its event stream), and when in this replica's order. */
  announced: { version: string; seq: number } | undefined;
  /** What a summary said of a model not read since (core/summary.ts), and when. */
  summary: { facts: ModelSummary; readAt: number } | undefined;
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
  /**
   * The facts of the newest version a call of ours put or read, when its name is the hash of its
   * content (core/manifest.ts namedByContent): while it exists it holds that content, so an edit's
   * fresh read needs only the model's versions. Void with the origin.
   */
  newest: VersionFacts | undefined;
  /**
   * The facts of the version deployed when a call of ours last read or wrote the model, when named
   * by its content: an edit whose deploy was lost knows, on its retry, both the version it put
   * (newest) and the one it replaces, without reading either again. Void with the origin.
   */
  deployed: VersionFacts | undefined;
}

export const NOTHING: Entry = {
  model: undefined,
  summary: undefined,
  status: undefined,
  deploy: undefined,
  announced: undefined,
  forgotAt: 0,
  sizes: undefined,
  origin: undefined,
  newest: undefined,
  deployed: undefined,
};

export function entryOf(previous: Entry, change: Partial<Entry>): Entry {
  return {
    model: 'model' in change ? change.model : previous.model,
    summary: 'summary' in change ? change.summary : previous.summary,
    status: 'status' in change ? change.status : previous.status,
    deploy: 'deploy' in change ? change.deploy : previous.deploy,
    announced: 'announced' in change ? change.announced : previous.announced,
    forgotAt: change.forgotAt ?? previous.forgotAt,
    sizes: 'sizes' in change ? change.sizes : previous.sizes,
    origin: 'origin' in change ? change.origin : previous.origin,
    newest: 'newest' in change ? change.newest : previous.newest,
    deployed: 'deployed' in change ? change.deployed : previous.deployed,
  };
}

/** The newest version's facts, when its name says its content (namedByContent). */
export function newestOf(model: ModelFacts): VersionFacts | undefined {
  return contentFacts(model, model.versions.at(-1));
}

/** The deployed version's facts, when its name says its content (namedByContent). */
export function deployedOf(model: ModelFacts): VersionFacts | undefined {
  return contentFacts(model, model.deployedVersion ?? undefined);
}

function contentFacts(model: ModelFacts, version: string | undefined): VersionFacts | undefined {
  const facts = version !== undefined && Object.hasOwn(model.known, version) ? model.known[version] : undefined;
  return facts && namedByContent(facts.version, facts.contentHash) ? facts : undefined;
}

/** The oldest version's facts, when the call read them. */
export function originOf(model: ModelFacts): VersionFacts | undefined {
  const oldest = model.versions[0];
  return oldest !== undefined && Object.hasOwn(model.known, oldest) ? model.known[oldest] : undefined;
}

/** The facts kept of single versions, void: the model they spoke of is gone, or not ours. */
export const NO_VERSION_FACTS = { origin: undefined, newest: undefined, deployed: undefined } as const;

/** Whether anything is kept of single versions. */
export function keepsVersionFacts(entry: Entry): boolean {
  return entry.origin !== undefined || entry.newest !== undefined || entry.deployed !== undefined;
}

/** The facts of single versions the model read shows, and where it shows none, those kept before. */
export function versionFactsOf(model: ModelFacts, entry: Entry | undefined): Pick<Entry, 'origin' | 'newest' | 'deployed'> {
  return {
    origin: originOf(model) ?? entry?.origin,
    newest: newestOf(model) ?? entry?.newest,
    deployed: deployedOf(model) ?? entry?.deployed,
  };
}

/** What is kept of one version without the model: the oldest, the newest or the deployed. */
export function keptVersion(entry: Entry, version: string): VersionFacts | undefined {
  for (const facts of [entry.newest, entry.deployed, entry.origin]) if (facts?.version === version) return facts;
  return undefined;
}
