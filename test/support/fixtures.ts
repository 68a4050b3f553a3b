// The shared wadm manifest fixtures (byte-exact upstream copies), read from outside the repo.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const DEFAULT_DIR = fileURLToPath(new URL('../../../shared/fixtures/wadm/', import.meta.url));

/** `$WADM_FIXTURES_DIR`, else `<repo>/../shared/fixtures/wadm`. */
export function fixturesDir(env: NodeJS.ProcessEnv = process.env): string {
  return env['WADM_FIXTURES_DIR'] || DEFAULT_DIR;
}

export function fixturePath(name: string): string {
  return join(fixturesDir(), name);
}

/** The fixture's exact bytes, to send as a put body. */
export function readFixture(name: string): Buffer {
  return readFileSync(fixturePath(name));
}
