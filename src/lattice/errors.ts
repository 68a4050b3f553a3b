// The one error the lattice layer throws: wadm could not be asked or did not answer usefully.
// The core turns it into Ready=Unknown (LatticeUnavailable) and a resync, never into a 5xx.
import type { UnavailableReason } from './wire.js';

export class WadmUnavailableError extends Error {
  constructor(
    readonly reason: UnavailableReason,
    message: string,
  ) {
    super(message);
    this.name = 'WadmUnavailableError';
  }
}
