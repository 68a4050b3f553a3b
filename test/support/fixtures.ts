// The wadm manifest fixtures: byte-exact upstream copies (Apache-2.0, see test/fixtures/wadm/README.md),
// kept in the repo so that a clean checkout has them. test/unit/fixtures.test.ts checks them against
// the team's shared copy when that exists.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_FIXTURES_DIR = fileURLToPath(new URL('../fixtures/wadm/', import.meta.url));
export const SHARED_FIXTURES_DIR = fileURLToPath(new URL('../../../shared/fixtures/wadm/', import.meta.url));

/** `$WADM_FIXTURES_DIR`, else `test/fixtures/wadm`. */
function fixturesDir(env: NodeJS.ProcessEnv = process.env): string {
  return env['WADM_FIXTURES_DIR'] || REPO_FIXTURES_DIR;
}

export function fixturePath(name: string): string {
  return join(fixturesDir(), name);
}

/** The fixture's exact bytes, to send as a put body. */
export function readFixture(name: string): Buffer {
  return readFileSync(fixturePath(name));
}

/** The fixture as text, e.g. to put to wadm as `wash app put` would, or to parse. */
export function fixtureText(name: string): string {
  return readFixture(name).toString('utf8');
}
