// The one pino root logger. JSON lines by default; credentials never reach a log line.
import { pino, type Logger } from 'pino';

export const REDACTED_PATHS = [
  'req.headers.authorization',
  '*.authorization',
  '*.password',
  '*.pass',
  '*.token',
  '*.seed',
  '*.creds',
  '*.nkey',
];

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const options = { level, base: { service: 'wasmcloud-metacontroller' }, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  return destination ? pino(options, destination as never) : pino(options);
}
