// Runs bench/paced-client.mjs in its own process and returns its measurements.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

export interface Paced {
  rate: number;
  sent: number;
  /** Service latency: from the request's send to its answer. */
  p50: number;
  p99: number;
  max: number;
  /** From the request's due time: includes the generator's own timer lateness (coordinated omission). */
  p99FromDue: number;
  non2xx: number;
}

export async function paced(url: string, body: string, rate: number, seconds: number, etag?: string): Promise<Paced> {
  const file = join(mkdtempSync(join(tmpdir(), 'paced-')), 'body.json');
  writeFileSync(file, body);
  const client = resolve(import.meta.dirname, 'paced-client.mjs');
  const { stdout } = await promisify(execFile)(process.execPath, [
    client,
    url,
    String(rate),
    String(seconds),
    file,
    ...(etag ? [etag] : []),
  ]);
  return JSON.parse(stdout) as Paced;
}
