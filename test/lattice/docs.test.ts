import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { REASONS, type Reason } from '../../src/core/reasons.js';
import { resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { Metrics } from '../../src/plumbing/metrics.js';
import { VARIABLES } from '../../src/plumbing/config.js';
import { EXCLUDED_KEY_PATTERNS } from '../../src/core/names.js';
import { HOOK_PATHS } from '../../src/http/server.js';
import yaml from 'js-yaml';
import { startNatsServer } from '../support/nats-server.js';
import { hookRequest } from '../support/resources.js';
import { CleanupStack, startService } from '../support/service.js';
import { startWadm } from '../support/wadm.js';

const ROOT = resolve(import.meta.dirname, '../..');
const readme = readFileSync(resolve(ROOT, 'README.md'), 'utf8');

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

  it('has exactly the two set-up commands, first of all: the demo and the tests', () => {
    const quickStart = readme.slice(readme.indexOf('## Quick start'));
    const commands = quickStart.split('```sh')[1]!.split('```')[0]!.trim().split('\n').map((line) => line.replace(/\s+#.*$/, ''));
    assert.deepEqual(commands, ['npm ci && npm run demo', 'npm test']);
    assert.equal(readme.indexOf('```sh'), readme.indexOf('## Quick start') + quickStart.indexOf('```sh'), 'no shell command comes before them');
    const scripts = (JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    assert.match(scripts['demo']!, /scripts\/demo\.ts$/);
    assert.equal(scripts['test'], 'bash scripts/test.sh');
  });

  it('names the Node.js version the image runs among the tested ones', () => {
    const image = /^ARG NODE_IMAGE=node:(\d+\.\d+)/m.exec(readFileSync(resolve(ROOT, 'Dockerfile'), 'utf8'))![1]!;
    const prerequisites = readme.slice(readme.indexOf('## Prerequisites'), readme.indexOf('## Install'));
    assert.match(prerequisites, new RegExp(`Node 20\\.\\d+ .*and ${image.replace('.', '\\.')} \\(the image\\)`));
  });

  it('links only to headings that exist', () => {
    const anchors = new Set(readme.split('\n').filter((line) => /^#{1,4} /.test(line)).map((line) =>
      line.replace(/^#+ /, '').toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-')));
    for (const [, anchor] of readme.matchAll(/\]\(#([^)]+)\)/g)) assert.ok(anchors.has(anchor!), `#${anchor} is no heading`);
  });

  it('shows command-line examples whose output is what the command prints', () => {
    const block = readme.slice(readme.indexOf('## Command line')).split('```console')[1]!.split('```')[0]!;
    const examples = block.split('\n$ ').map((chunk) => chunk.replace(/^\n?\$ /, '')).filter((chunk) => chunk.trim() !== '');
    assert.ok(examples.length >= 3);
    for (const example of examples) {
      const [command, ...expected] = example.trimEnd().split('\n');
      const args = command!.replace(/^wasmcloud-metacontroller /, '').replace(/ > \S+$/, '').split(' ');
      const redirected = / > \S+$/.test(command!);
      const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], { cwd: resolve(import.meta.dirname, '../..'), encoding: 'utf8' });
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
    metrics.observeCaches({ knowledge: { size: 0, evictions: 0 }, answers: { size: 0, evictions: 0 } }, () => 0);
  metrics.observeWatch(() => 0);
    const families = await metrics.registry.getMetricsAsJSON();
    const names = new Set(families.flatMap((f) => (String(f.type) === 'histogram' ? ['_bucket', '_count', '_sum'].map((x) => f.name + x) : [f.name])));
    const excerpt = readme.slice(readme.indexOf('## Metrics and logs')).split('```text')[1]!.split('```')[0]!;
    for (const line of excerpt.trim().split('\n')) assert.ok(names.has(line.split(/[{ ]/)[0]!), line);
  });
});

describe('README.md, its example hook call', () => {
  const section = readme.slice(readme.indexOf('### An example hook call'));
  const [request, answer] = section.split('```json').slice(1, 3).map((block) => JSON.parse(block.split('```')[0]!) as Record<string, unknown>);
  const cleanups = new CleanupStack();
  let serviceUrl = '';

  before(async () => {
    const nats = await startNatsServer();
    cleanups.after(() => nats.dispose());
    const wadm = await startWadm(nats.url);
    cleanups.after(() => wadm.stop());
    const running = await startService(cleanups, { NATS_URL: nats.url });
    await running.connected();
    serviceUrl = running.url;
  });
  after(async () => {
    await cleanups.run();
  });

  it('is answered as the README shows, against the real wadm (times aside)', async () => {
    const response = await fetch(`${serviceUrl}/sync`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) });
    assert.equal(response.status, 200);
    assert.ok(response.headers.get('etag'));
    const times = (text: string) => text.replace(/"lastTransitionTime":"[^"]+"/g, '"lastTransitionTime":"<time>"');
    assert.equal(times(JSON.stringify(await response.json())), times(JSON.stringify(answer)));
  });

  it('is the request the demo writes for curl', () => {
    const app = yaml.load(readFileSync(resolve(ROOT, 'examples/apps/hello-world.yaml'), 'utf8')) as { metadata: Record<string, unknown> };
    assert.deepEqual(hookRequest({ ...app, metadata: { ...app.metadata, namespace: 'default' } } as never), request);
  });
});
