// The HTTP side of pkg/hooks/webhook.go: one POST with a whole-exchange timeout (Go http.Client.Timeout also covers
// reading the body), the headers Metacontroller sends, and Go's Retry-After parsing for 429.

export type HookOutcome =
  | { kind: 'response'; httpStatus: number; body: string; retryAfter: string | null; etag?: string | null; durationMs: number }
  | { kind: 'transport-error'; message: string; durationMs: number };

export interface PostOptions {
  timeoutMs: number;
  headers: Record<string, string>;
}

export async function postHook(url: string, body: string, options: PostOptions): Promise<HookOutcome> {
  const started = performance.now();
  const elapsed = (): number => Math.round((performance.now() - started) * 1000) / 1000;
  const signal = AbortSignal.timeout(options.timeoutMs);
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      // Go's defaults; Metacontroller adds only Content-Type and, when configured, Authorization.
      headers: { 'User-Agent': 'Go-http-client/1.1', 'Content-Type': 'application/json', ...options.headers },
      body,
      signal,
    });
  } catch (error) {
    const detail = isTimeout(error)
      ? 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
      : describe(error);
    return { kind: 'transport-error', message: `http error: Post "${url}": ${detail}`, durationMs: elapsed() };
  }
  if (response.status === 429) {
    // Go returns before reading the body.
    await response.body?.cancel().catch(() => undefined);
    return { kind: 'response', httpStatus: 429, body: '', retryAfter: response.headers.get('retry-after'), durationMs: elapsed() };
  }
  try {
    const text = await response.text();
    return { kind: 'response', httpStatus: response.status, body: text, retryAfter: null, etag: response.headers.get('etag'), durationMs: elapsed() };
  } catch (error) {
    const detail = isTimeout(error)
      ? 'context deadline exceeded (Client.Timeout or context cancellation while reading body)'
      : describe(error);
    return { kind: 'transport-error', message: `can't read response body: ${detail}`, durationMs: elapsed() };
  }
}

const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const RFC1123 = new RegExp(`^${DAY}, (\\d{2}) (${MONTHS.join('|')}) (\\d{4}) (\\d{2}):(\\d{2}):(\\d{2}) [A-Z]{3,5}$`);

/**
 * Seconds to wait, as Metacontroller computes them: an RFC 1123 date gives ceil(date - now) (zone abbreviations
 * count as UTC, as Go does for unknown ones); otherwise strconv.Atoi, whose failures (missing, "1.5", " 5") give 0.
 */
export function parseRetryAfter(header: string | null, nowMs: number): number {
  const value = header ?? '';
  const date = RFC1123.exec(value);
  if (date) {
    const [, day, month, year, hh, mm, ss] = date;
    const at = Date.UTC(Number(year), MONTHS.indexOf(month ?? ''), Number(day), Number(hh), Number(mm), Number(ss));
    return Math.ceil((at - nowMs) / 1000);
  }
  if (!/^[+-]?\d+$/.test(value)) return 0;
  const seconds = Number(value);
  return Number.isSafeInteger(seconds) ? seconds : 0;
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && (error.name === 'TimeoutError' || (error.cause as Error | undefined)?.name === 'TimeoutError');
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { code?: string; message?: string } | undefined;
  if (!cause?.message) return error.message;
  return cause.code !== undefined && !cause.message.includes(cause.code) ? `${cause.code}: ${cause.message}` : cause.message;
}
