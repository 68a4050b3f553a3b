// The one pino root logger. JSON lines by default; credentials never reach a log line.
import { pino, type Logger } from 'pino';

const REDACTED_PATHS = ['req.headers.authorization', '*.authorization', '*.password', '*.pass', '*.token', '*.seed', '*.creds', '*.nkey'];

/**
 * JSON lines, unless LOG_FORMAT=pretty asks for human-readable lines (or it is unset and stdout is
 * a terminal): for a developer's shell, not for a log pipeline.
 */
export function createLogger(level: string, destination?: NodeJS.WritableStream, format?: string): Logger {
  const options = { level, base: { service: 'wasmcloud-metacontroller' }, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  if (destination) return pino(options, destination as never);
  const pretty = format === 'pretty' || (format === undefined && process.stdout.isTTY === true);
  return pretty
    ? pino({ ...options, transport: { target: 'pino-pretty', options: { colorize: process.stdout.isTTY === true } } })
    : pino(options);
}
