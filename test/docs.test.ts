import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { VARIABLES } from '../src/config.js';
import { EXCLUDED_KEY_PATTERNS } from '../src/metadata.js';
import { HOOK_PATHS } from '../src/server.js';

const readme = readFileSync(resolve(import.meta.dirname, '../README.md'), 'utf8');

describe('README.md', () => {
  it('documents every environment variable with its default', () => {
    for (const variable of Object.values(VARIABLES)) {
      const shown = variable.default === '' ? '—' : `\`${variable.default}\``;
      assert.ok(readme.includes(`| \`${variable.env}\` | ${shown} |`), `${variable.env} (default ${shown}) is missing from the table`);
    }
  });

  it('lists every label and annotation pattern that does not reach wadm', () => {
    for (const pattern of EXCLUDED_KEY_PATTERNS) assert.ok(readme.includes(`\`${pattern}\``), `${pattern} is not documented`);
  });

  it('names the hook paths the server registers', () => {
    for (const path of Object.values(HOOK_PATHS)) assert.ok(readme.includes(`POST ${path}`), path);
  });

  it('has exactly the two set-up commands', () => {
    const setup = readme.slice(readme.indexOf('## Set up'), readme.indexOf('## Install'));
    const commands = setup.split('```sh')[1]!.split('```')[0]!.trim().split('\n');
    assert.equal(commands.length, 2);
    assert.match(commands[1]!, /npm test/);
  });
});
