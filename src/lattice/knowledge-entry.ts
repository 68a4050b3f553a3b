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
  };
}

/** The newest version's facts, when its name says its content (namedByContent). */
export function newestOf(model: ModelFacts): VersionFacts | undefined {
  const newest = model.versions.at(-1);
  const facts = newest !== undefined && Object.hasOwn(model.known, newest) ? model.known[newest] : undefined;
  return facts && namedByContent(facts.version, facts.contentHash) ? facts : undefined;
}

/** The oldest version's facts, when the call read them. */
export function originOf(model: ModelFacts): VersionFacts | undefined {
  const oldest = model.versions[0];
  return oldest !== undefined && Object.hasOwn(model.known, oldest) ? model.known[oldest] : undefined;
}
