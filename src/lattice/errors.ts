// The error the lattice layer throws when wadm could not be asked or did not answer usefully;
// the gateway turns it into an `unavailable` result, and the core into Ready=Unknown
// (LatticeUnavailable) with a resync, never into a 5xx. (subjects.ts also throws, on a name that
// is not a subject token: a bug, since the core validates every name first.) Its own module so
// that the wadm client and its limiter share it without importing each other.
import type { UnavailableReason } from '../core/facts.js';

export class WadmUnavailableError extends Error {
  constructor(
    readonly reason: UnavailableReason,
    message: string,
  ) {
    super(message);
    this.name = 'WadmUnavailableError';
  }
}
