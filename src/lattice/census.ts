// Whether wadm still has what this replica remembers of a lattice: once per check period, before a
// remembered model of the lattice is used again, one read of wadm's list of the lattice's
// applications (`model.get` without a name), compared with what is remembered (core/census.ts).
// wadm can lose its store whole and start again on an empty one without a word: what the list no
// longer shows as remembered is forgotten, read again, and put and deployed again by the core.
// One request per lattice and period, however many applications the lattice has, and only on
// subjects the service's NATS user has anyway (SECURITY.md).
//
// wadm answers the list in one NATS message: past the server's max_payload (about 1,300 deployed
// applications of three scalers at 1 MiB) it cannot send it, and the list times out. Such a
// lattice is not listed again for unlistedRetryMs; one whose list failed otherwise (no wadm, a
// storage error) for failedRetryMs,
// so that no call sends a list that just failed. Meanwhile no list confirms the lattice's models,
// so each application reads its own once per check period instead (knowledge.ts).
import { contradicted, type ListedModel } from '../core/census.js';
import { timeLeft } from '../plumbing/deadline.js';
import { WadmUnavailableError } from './errors.js';
import type { Knowledge } from './knowledge.js';

/** How a check ended: the list confirmed what is remembered, contradicted some of it, or could not be read. */
export type CheckOutcome = 'confirmed' | 'contradicted' | 'unlisted';

export interface CensusOptions {
  list(lattice: string): Promise<ListedModel[]>;
  now: () => number;
  /** WADM_TIMEOUT_MS: a list that timed out after all of it is taken as too large for one message. */
  wadmTimeoutMs: number;
  /** A lattice whose list timed out is not listed again for this long. */
  unlistedRetryMs: number;
  /** A lattice whose list failed otherwise is not listed again for this long. */
  failedRetryMs: number;
  /** After every check: how many remembered models it forgot, or why the list could not be read. */
  onCheck?: (lattice: string, outcome: CheckOutcome, detail: { forgotten: number } | { error: WadmUnavailableError }) => void;
  /** After every list read: the whole list, as of `at` (before it was sent). */
  onListed?: (lattice: string, at: number, models: ListedModel[]) => void;
}

/** Lattices remembered as unlisted at most: past it they are forgotten (and listed again). */
const MAX_UNLISTED = 10_000;

export class LatticeCensus {
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Lattices whose list failed, until when it is not asked again, and why it failed. */
  private readonly unlistedUntil = new Map<string, { until: number; error: WadmUnavailableError; tooLarge: boolean }>();

  constructor(
    private readonly knowledge: Knowledge,
    private readonly options: CensusOptions,
  ) {}

  /** Why the lattice's list is not asked now (it failed lately), or undefined: it may be asked. */
  unlisted(lattice: string): { error: WadmUnavailableError; tooLarge: boolean } | undefined {
    const failed = this.unlistedUntil.get(lattice);
    return failed !== undefined && this.options.now() < failed.until ? { error: failed.error, tooLarge: failed.tooLarge } : undefined;
  }

  /** Lists the lattice unless it is being listed (then waits for that, at most what this call has left) or is unlisted. */
  check(lattice: string): Promise<void> {
    const pending = this.inFlight.get(lattice);
    if (pending) return atMost(pending, timeLeft(this.options.wadmTimeoutMs));
    const until = this.unlistedUntil.get(lattice)?.until;
    if (until !== undefined && this.options.now() < until) return Promise.resolve();
    this.unlistedUntil.delete(lattice);
    const check = this.list(lattice).finally(() => this.inFlight.delete(lattice));
    this.inFlight.set(lattice, check);
    return check;
  }

  private async list(lattice: string): Promise<void> {
    // Before the request: what is confirmed is confirmed as of when wadm may have read it.
    const at = this.options.now();
    const wholeWait = timeLeft(this.options.wadmTimeoutMs) >= this.options.wadmTimeoutMs;
    const seq = this.knowledge.listStarted(lattice);
    let listed: ListedModel[];
    try {
      listed = await this.options.list(lattice);
    } catch (err) {
      this.knowledge.listings.failed(lattice);
      if (!(err instanceof WadmUnavailableError)) throw err;
      // Only a timeout after the whole wait says "too large": one cut short by the call's own
      // budget says nothing of the lattice.
      const tooLarge = err.reason === 'Timeout' && wholeWait;
      if (this.unlistedUntil.size >= MAX_UNLISTED) this.unlistedUntil.clear();
      this.unlistedUntil.set(lattice, {
        until: at + (tooLarge ? this.options.unlistedRetryMs : this.options.failedRetryMs),
        error: err,
        tooLarge,
      });
      this.options.onCheck?.(lattice, 'unlisted', { error: err });
      return;
    }
    this.options.onListed?.(lattice, at, listed);
    const stale = contradicted(this.knowledge.remembered(lattice), listed);
    this.knowledge.checked(lattice, at, stale);
    // Kept for a period: what a fresh replica answers settled applications from (core/summary.ts).
    this.knowledge.listed(lattice, listed, at, seq);
    this.options.onCheck?.(lattice, stale.length > 0 ? 'contradicted' : 'confirmed', { forgotten: stale.length });
  }
}

/** Another call's check, waited for at most `ms`: past it this call reads its model itself. */
function atMost(pending: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([pending.catch(() => undefined), expired]).finally(() => clearTimeout(timer));
}
