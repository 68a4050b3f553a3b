// Each lattice's last list of applications (wadm's `model.get` without a name), kept for one check
// period so that the applications a fresh replica has not read can each take their line from it
// once (core/summary.ts): one list answers every settled application of the lattice. An event
// about an application (a status message, an announced deploy or undeploy) drops its line, also
// from a list still on its way: that line may predate the event.
import type { ListedModel } from '../core/census.js';
import type { LatticeStatus, ModelSummary } from '../core/facts.js';
import { lean } from './lean-status.js';

/** One line of a lattice's list, as kept until its application takes it. */
export interface Listed {
  facts: ModelSummary;
  status: LatticeStatus | undefined;
}

interface Listing {
  /** When the list was sent. */
  at: number;
  /** Knowledge's sequence number then: an event after it makes a line stale. */
  seq: number;
  lines: Map<string, Listed>;
}

export class ListLines {
  private readonly kept = new Map<string, Listing>();
  /** Lattices being listed, and the names an event touched meanwhile. */
  private readonly pending = new Map<string, Set<string>>();

  /** `recent(at)`: a list sent at `at` is within the check period. */
  constructor(private readonly recent: (at: number) => boolean) {}

  started(lattice: string): void {
    this.pending.set(lattice, new Set());
  }

  failed(lattice: string): void {
    this.pending.delete(lattice);
  }

  /** A list arrived: its lines but those an event touched since it was sent, and those `skip` names. */
  store(lattice: string, models: readonly ListedModel[], at: number, seq: number, skip: (name: string) => boolean): void {
    const touched = this.pending.get(lattice);
    this.pending.delete(lattice);
    const kept = new Map<string, Listed>();
    for (const { name, version, deployed, status } of models)
      if (!touched?.has(name) && !skip(name)) kept.set(name, { facts: { version, deployed }, status: status && lean(status) });
    // A lattice's list replaces its last; others past their period go now (nothing else would drop them).
    for (const [other, listing] of this.kept) if (!this.recent(listing.at)) this.kept.delete(other);
    this.kept.set(lattice, { at, seq, lines: kept });
  }

  /** Whether the lattice was listed within the check period. */
  has(lattice: string): boolean {
    const listing = this.kept.get(lattice);
    return listing !== undefined && this.recent(listing.at);
  }

  /** This application's line, taken (once): undefined without a list of the period, null when it does not name it. */
  take(lattice: string, name: string): { listed: Listed; at: number; seq: number } | null | undefined {
    const listing = this.kept.get(lattice);
    if (listing === undefined || !this.recent(listing.at)) return undefined;
    const listed = listing.lines.get(name);
    if (listed === undefined) return null;
    listing.lines.delete(name);
    return { listed, at: listing.at, seq: listing.seq };
  }

  /** An event about this application: its line, kept or on its way, no longer says what wadm holds. */
  touched(lattice: string, name: string): void {
    this.kept.get(lattice)?.lines.delete(name);
    this.pending.get(lattice)?.add(name);
  }

  drop(lattice: string): void {
    this.kept.delete(lattice);
  }

  clear(): void {
    this.kept.clear();
    this.pending.clear();
  }
}
