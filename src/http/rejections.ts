// Every non-2xx answer of the HTTP app has one shape, {"error": <a name of ours>, "message": ...},
// and every rejected hook call is counted and logged. Fastify's own codes (FST_ERR_*) are internal
// details of the framework: callers and alerts see only the names below.
import type { Logger } from 'pino';
import type { HookLabel } from '../schema/hook.js';
import type { Metrics } from '../plumbing/metrics.js';

const ERROR_NAMES = {
  400: 'BadRequest',
  401: 'Unauthorized',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  429: 'TooManyRequests',
  500: 'InternalError',
} as const;

export interface ErrorBody {
  error: string;
  message: string;
}

/** The one error body for a status and a message; a status we never chose reads as BadRequest. */
export function errorBody(status: number, message: string): ErrorBody {
  return { error: (ERROR_NAMES as Record<number, string>)[status] ?? 'BadRequest', message };
}

/** A framework error (parsing, limits) turned into our status and message, never its code. */
export function describeFrameworkError(
  error: Error & { statusCode?: number; code?: string },
  bodyLimit: number,
): { status: number; body: ErrorBody } {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, body: { error: 'MalformedJSON', message: 'the body is not valid JSON' } };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, body: errorBody(413, `the body is larger than ${bodyLimit} bytes (BODY_LIMIT_BYTES)`) };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, body: errorBody(415, 'hook calls must be sent with Content-Type: application/json') };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 400, body: errorBody(400, 'the Content-Length header does not match the body') };
  }
  // JSON.parse errors that reach us without a Fastify code are malformed bodies as well.
  if (error instanceof SyntaxError) return { status: 400, body: { error: 'MalformedJSON', message: 'the body is not valid JSON' } };
  const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
  return { status, body: errorBody(status, status === 500 ? 'internal error; see the service log' : 'the request was rejected') };
}

const LOG_WINDOW_MS = 10_000;

/**
 * Counts every rejected hook call in hook_requests_total{hook,code} and logs it at warn, at most one
 * line per code per 10 s (a misconfigured caller retries in a loop; the log must survive it). The
 * line after a quiet window says how many were not logged. Never the body or the Authorization
 * header: they may carry secrets.
 */
export function rejectionRecorder(metrics: Metrics, logger: Logger, now: () => number) {
  const windows = new Map<number, { loggedAt: number; suppressed: number }>();
  return (hook: HookLabel, status: number, error: string, remote: string | undefined): void => {
    metrics.countHookCall(hook, String(status));
    const window = windows.get(status);
    const at = now();
    if (window && at - window.loggedAt < LOG_WINDOW_MS) {
      window.suppressed++;
      return;
    }
    const suppressed = window?.suppressed ?? 0;
    windows.set(status, { loggedAt: at, suppressed: 0 });
    logger.warn({ hook, code: status, error, remote, ...(suppressed > 0 ? { suppressed } : {}) }, 'hook call rejected');
  };
}
