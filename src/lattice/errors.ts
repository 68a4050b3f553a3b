// The error the lattice layer throws when wadm could not be asked or did not answer usefully, and
// the mapping of a failed NATS request onto it; the gateway turns it into an `unavailable` result,
// and the core into Ready=Unknown (LatticeUnavailable) with a resync, never into a 5xx. (subjects.ts
// also throws, on a name that is not a subject token: a bug, since the core validates every name
// first.) Its own module so that the wadm client and its limiter share it.
import { ErrorCode, type NatsError } from 'nats';
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

/** The outcome label of a failed request, for wadm_requests_total. */
export function outcomeOf(err: unknown): string {
  const code = (err as NatsError).code;
  if (code === ErrorCode.NoResponders) return 'no_responders';
  if (code === ErrorCode.Timeout) return 'timeout';
  if (code === ErrorCode.PermissionsViolation) return 'permission_denied';
  return err instanceof SyntaxError ? 'bad_reply' : 'error';
}

/**
 * What a failed NATS request means for the hook: which kind of unavailable. `grant`: what the
 * service's NATS user needs to use the request's lattice, said when NATS refused the subject.
 */
export function unavailable(err: unknown, subject: string, timeoutMs: number, grant: string): WadmUnavailableError {
  const code = (err as NatsError).code;
  const refused = (err as NatsError).permissionContext;
  if (code === ErrorCode.PermissionsViolation && refused?.operation === 'subscription') {
    // The reply inbox (`<prefix>.<nuid>.*`, request-mux.ts): no request of any lattice can be answered.
    const grantInbox = `${refused.subject.split('.').slice(0, -2).join('.')}.>`;
    return new WadmUnavailableError(
      'NotPermitted',
      `NATS refused this service's user to subscribe to its reply inbox "${refused.subject}" (permissions violation), so no reply to ${subject} can arrive; grant it subscribe on "${grantInbox}" (see SECURITY.md)`,
    );
  }
  if (code === ErrorCode.PermissionsViolation) {
    return new WadmUnavailableError(
      'NotPermitted',
      `NATS refused this service's user to publish to "${subject}" (permissions violation); grant it ${grant} (see SECURITY.md)`,
    );
  }
  if (code === ErrorCode.NoResponders) return new WadmUnavailableError('NoResponders', `no wadm is listening on ${subject}`);
  if (code === ErrorCode.Timeout) return new WadmUnavailableError('Timeout', `wadm did not answer ${subject} within ${timeoutMs} ms`);
  if (err instanceof SyntaxError) return new WadmUnavailableError('BadReply', `wadm's reply to ${subject} is not JSON`);
  return new WadmUnavailableError('Disconnected', `request ${subject} failed: ${err instanceof Error ? err.message : String(err)}`);
}

export function badReply(op: string, reply: { result: string; message?: string }): WadmUnavailableError {
  return new WadmUnavailableError('BadReply', `unexpected ${op} result "${reply.result}": ${reply.message ?? ''}`);
}
