import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { REASONS, type Reason } from '../src/core/reasons.js';
import { resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { Metrics } from '../src/service/metrics.js';
import { VARIABLES } from '../src/service/config.js';
import { EXCLUDED_KEY_PATTERNS } from '../src/core/names.js';
import { HOOK_PATHS } from '../src/http/server.js';

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

  it('shows command-line examples whose output is what the command prints', () => {
    const block = readme.slice(readme.indexOf('## Command line')).split('```console')[1]!.split('```')[0]!;
    const examples = block.split('\n$ ').map((chunk) => chunk.replace(/^\n?\$ /, '')).filter((chunk) => chunk.trim() !== '');
    assert.ok(examples.length >= 3);
    for (const example of examples) {
      const [command, ...expected] = example.trimEnd().split('\n');
      const args = command!.replace(/^wasmcloud-metacontroller /, '').replace(/ > \S+$/, '').split(' ');
      const redirected = / > \S+$/.test(command!);
      const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], { cwd: resolve(import.meta.dirname, '..'), encoding: 'utf8' });
      const shown = redirected ? run.stderr : run.stdout + run.stderr;
      assert.equal(shown.trimEnd(), expected.join('\n'), `$ ${command}`);
    }
  });

  it('has the status table of the reasons catalogue, row for row', () => {
    const table = readme.slice(readme.indexOf('| reason | phase | Ready | sets | fixed by |')).split('\n\n')[0]!.split('\n').slice(2);
    const rows = (Object.keys(REASONS) as Reason[]).map((reason) => {
      const info: { phases: readonly string[]; ready: string; condition?: string; fixedBy: string; doc: string } = REASONS[reason];
      return `| \`${reason}\` | ${info.phases.join(', ')} | ${info.ready} | ${info.condition ?? '—'} | ${info.fixedBy} | ${info.doc} |`;
    });
    assert.deepEqual(table, rows);
  });

  it('lists metric series the service exposes', async () => {
    const metrics = new Metrics({ defaultMetrics: true });
    metrics.observeCaches({ knowledge: { size: 0, evictions: 0 }, answers: { size: 0, evictions: 0 } });
    const families = await metrics.registry.getMetricsAsJSON();
    const names = new Set(families.flatMap((f) => (String(f.type) === 'histogram' ? ['_bucket', '_count', '_sum'].map((x) => f.name + x) : [f.name])));
    const excerpt = readme.slice(readme.indexOf('## Metrics and logs')).split('```text')[1]!.split('```')[0]!;
    for (const line of excerpt.trim().split('\n')) assert.ok(names.has(line.split(/[{ ]/)[0]!), line);
  });
});
