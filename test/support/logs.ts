// The one log sink of the tests: pino writes JSON lines into a Writable; each line is parsed. Without `onLine`
// the lines are kept in order in `lines`; with it each goes to `onLine` only (long fuzz runs keep nothing).
import { Writable } from 'node:stream';

export type LogLine = Record<string, unknown>;

export function jsonLogSink(onLine?: (line: LogLine) => void): { sink: Writable; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const take = onLine ?? ((line: LogLine) => void lines.push(line));
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const text of String(chunk).split('\n').filter(Boolean)) take(JSON.parse(text) as LogLine);
      done();
    },
  });
  return { sink, lines };
}
