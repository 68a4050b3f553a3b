import { it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_FIXTURES_DIR, SHARED_FIXTURES_DIR } from '../support/fixtures.js';

it('keeps the repo copy of the wadm fixtures byte-identical to the shared copy', (t) => {
  if (!existsSync(SHARED_FIXTURES_DIR)) return t.skip(`no shared copy at ${SHARED_FIXTURES_DIR} on this machine`);
  const shared = readdirSync(SHARED_FIXTURES_DIR).sort();
  assert.deepEqual(readdirSync(REPO_FIXTURES_DIR).sort(), shared);
  for (const file of shared) {
    assert.ok(readFileSync(join(REPO_FIXTURES_DIR, file)).equals(readFileSync(join(SHARED_FIXTURES_DIR, file))), file);
  }
});
