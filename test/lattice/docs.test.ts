import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { LATTICE_REASONS, REASONS, type LatticeReason, type Reason } from '../../src/core/reasons.js';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { exposedSeries } from '../support/metric-names.js';
import { VARIABLES } from '../../src/plumbing/config.js';
import { EXCLUDED_KEY_PATTERNS } from '../../src/core/names.js';
import { HOOK_PATHS } from '../../src/server.js';
import yaml from 'js-yaml';
import { brokenLinks, slug } from '../support/markdown-links.js';
import { startNatsServer } from '../support/nats-server.js';
import { hookRequest } from '../support/resources.js';
import { CleanupStack, startService } from '../support/service.js';
import { startWadm } from '../support/wadm.js';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(resolve(ROOT, path), 'utf8');
const readme = read('README.md');
/** The reference pages README.md sends a reader on to. */
const PAGES = readdirSync(resolve(ROOT, 'docs'))
  .filter((file) => file.endsWith('.md'))
  .map((file) => `docs/${file}`);

describe('README.md', () => {
  it('has exactly the two set-up commands, first of all: the demo and the tests', () => {
    const quickStart = readme.slice(readme.indexOf('## Quick start'));
    const commands = quickStart
      .split('```sh')[1]!
      .split('```')[0]!
      .trim()
      .split('\n')
      .map((line) => line.replace(/\s+#.*$/, ''));
    assert.deepEqual(commands, ['npm ci && npm run demo', 'npm test']);
    assert.equal(
      readme.indexOf('```sh'),
      readme.indexOf('## Quick start') + quickStart.indexOf('```sh'),
      'no shell command comes before them',
    );
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    assert.match(scripts['demo']!, /scripts\/demo\.ts$/);
    assert.equal(scripts['test'], 'bash scripts/test.sh');
  });

  it('sends the reader on to every page of docs/', () => {
    for (const page of PAGES) assert.ok(readme.includes(`](${page})`), `README.md does not link to ${page}`);
  });
});

describe('docs/*.md', () => {
  it('each starts with its purpose in one line and a link back to the README', () => {
    for (const page of PAGES) {
      const [title, purpose] = read(page).split('\n\n');
      assert.match(title!, /^# \S/, page);
      assert.ok(!purpose!.includes('\n') && purpose!.includes('](../README.md)'), `${page}: ${purpose}`);
    }
  });
});

describe('docs/configuration.md', () => {
  it('documents every environment variable with its default', () => {
    const page = read('docs/configuration.md');
    for (const variable of Object.values(VARIABLES)) {
      const shown = variable.default === '' ? '—' : `\`${variable.default}\``;
      assert.ok(page.includes(`| \`${variable.env}\` | ${shown} |`), `${variable.env} (default ${shown}) is missing from the table`);
    }
  });
});

describe('docs/development.md', () => {
  it("names the supported Node.js lines as package.json's engines does, and as tested, the image's among them", () => {
    const image = /^ARG NODE_IMAGE=node:(\d+\.\d+)/m.exec(read('Dockerfile'))![1]!;
    const tested = [...read('scripts/node-lines.env').matchAll(/^NODE_\d+_VERSION=(\d+\.\d+)\.\d+$/gm)].map((m) => m[1]!);
    assert.ok(tested.includes(image));
    const page = read('docs/development.md');
    const prerequisites = page.slice(page.indexOf('## Prerequisites'), page.indexOf('\n## ', page.indexOf('## Prerequisites') + 1));
    const list = (items: string[]) => (items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`);
    const named = list(tested.map((version) => (version === image ? `${version} (the image)` : version)));
    assert.ok(prerequisites.includes(`tested: Node ${named}`), `docs/development.md's prerequisites do not say: tested: Node ${named}`);
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    const supported = `Supported: the LTS lines ${list(tested.map((version) => version.split('.')[0]!))} (\`engines\`: \`${engines}\`)`;
    assert.ok(prerequisites.includes(supported), `docs/development.md's prerequisites do not say: ${supported}`);
  });
});

describe('docs/cli.md', () => {
  it('shows command-line examples whose output is what the command prints', () => {
    const block = read('docs/cli.md').split('```console')[1]!.split('```')[0]!;
    const examples = block
      .split('\n$ ')
      .map((chunk) => chunk.replace(/^\n?\$ /, ''))
      .filter((chunk) => chunk.trim() !== '');
    assert.ok(examples.length >= 3);
    for (const example of examples) {
      const [command, ...expected] = example.trimEnd().split('\n');
      const args = command!
        .replace(/^wasmcloud-metacontroller /, '')
        .replace(/ > \S+$/, '')
        .split(' ');
      const redirected = / > \S+$/.test(command!);
      const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], { cwd: ROOT, encoding: 'utf8' });
      const shown = redirected ? run.stderr : run.stdout + run.stderr;
      assert.equal(shown.trimEnd(), expected.join('\n'), `$ ${command}`);
    }
  });
});

describe('docs/resource.md', () => {
  const page = read('docs/resource.md');

  it('lists every label and annotation pattern that does not reach wadm', () => {
    for (const pattern of EXCLUDED_KEY_PATTERNS) assert.ok(page.includes(`\`${pattern}\``), `${pattern} is not documented`);
  });

  it('has the status table of the reasons catalogue, row for row', () => {
    const table = page.slice(page.indexOf('| reason | phase | Ready | sets | fixed by |')).split('\n\n')[0]!.split('\n').slice(2);
    const rows = (Object.keys(REASONS) as Reason[]).map((reason) => {
      const info: { phases: readonly string[]; ready: string; condition?: string; fixedBy: string; doc: string } = REASONS[reason];
      return `| \`${reason}\` | ${info.phases.join(', ')} | ${info.ready} | ${info.condition ?? '—'} | ${info.fixedBy} | ${info.doc} |`;
    });
    assert.deepEqual(table, rows);
  });
});

describe('docs/lattice.md', () => {
  it('has the status table of the lattice reasons, row for row', () => {
    const page = read('docs/lattice.md');
    const table = page
      .slice(page.indexOf('| reason | Ready | sets | fixed by |'))
      .split('\n\n')[0]!
      .split('\n')
      .slice(2)
      .filter((row) => row !== '');
    const rows = (Object.keys(LATTICE_REASONS) as LatticeReason[]).map((reason) => {
      const info: { ready: string; condition?: string; fixedBy: string; doc: string } = LATTICE_REASONS[reason];
      return `| \`${reason}\` | ${info.ready} | ${info.condition ?? '—'} | ${info.fixedBy} | ${info.doc} |`;
    });
    assert.deepEqual(table, rows);
  });
});

describe('docs/operations.md', () => {
  it('lists metric series the service exposes', async () => {
    const names = await exposedSeries();
    const page = read('docs/operations.md');
    const excerpt = page.slice(page.indexOf('## Metrics and logs')).split('```text')[1]!.split('```')[0]!;
    for (const line of excerpt.trim().split('\n')) assert.ok(names.has(line.split(/[{ ]/)[0]!), line);
  });
});

describe('docs/hooks.md', () => {
  it('names the hook paths the server registers', () => {
    const page = read('docs/hooks.md');
    for (const path of Object.values(HOOK_PATHS)) assert.ok(page.includes(`POST ${path}`), path);
  });
});

describe('docs/hooks.md, its example hook call', () => {
  const page = read('docs/hooks.md');
  const section = page.slice(page.indexOf('## An example hook call'));
  const [request, answer] = section
    .split('```json')
    .slice(1, 3)
    .map((block) => JSON.parse(block.split('```')[0]!) as Record<string, unknown>);
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

  it('is answered as the page shows, against the real wadm (times aside)', async () => {
    const response = await fetch(`${serviceUrl}/sync`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(request),
    });
    assert.equal(response.status, 200);
    assert.ok(response.headers.get('etag'));
    const times = (text: string) => text.replace(/"(lastTransitionTime|deployedAt)":"[^"]+"/g, '"$1":"<time>"');
    assert.equal(times(JSON.stringify(await response.json())), times(JSON.stringify(answer)));
  });

  it('is the request the demo writes for curl', () => {
    const app = yaml.load(read('examples/apps/hello-world.yaml')) as { metadata: Record<string, unknown> };
    assert.deepEqual(hookRequest({ ...app, metadata: { ...app.metadata, namespace: 'default' } } as never), request);
  });
});

describe('BENCHMARKS.md', () => {
  it('has a row for every setting the bench reads from the environment', () => {
    const benchmarks = read('BENCHMARKS.md');
    const sources = readdirSync(resolve(ROOT, 'bench'))
      .filter((file) => file.endsWith('.ts'))
      .map((file) => read(`bench/${file}`));
    const settings = new Set(sources.flatMap((source) => [...source.matchAll(/['"](BENCH_[A-Z_]+)['"]/g)].map((m) => m[1]!)));
    assert.ok(settings.size >= 10, [...settings].join(', '));
    for (const setting of settings)
      assert.ok(benchmarks.includes(`| \`${setting}\` |`), `${setting} has no row in BENCHMARKS.md's settings table`);
  });
});

describe('the links between the documents', () => {
  const documents = ['README.md', ...PAGES, 'SECURITY.md', 'CHANGELOG.md', 'BENCHMARKS.md', 'examples/README.md'];

  it('point to files that exist and, with an anchor, to a heading of that file', () => {
    assert.deepEqual(brokenLinks(ROOT, documents), []);
  });

  it('are checked as GitHub makes anchors: punctuation dropped, repeated headings numbered', () => {
    const dir = mkdtempSync(join(tmpdir(), 'links-'));
    writeFileSync(
      join(dir, 'a.md'),
      '# A\n\n## Where it stands\n\n## Where it stands\n\n### The last 20 % go, `fast`\n\n```sh\n# not a heading\n```\n',
    );
    writeFileSync(
      join(dir, 'b.md'),
      [
        '[ok](a.md#where-it-stands-1) [ok](a.md#the-last-20--go-fast) [ok](#b) [ok](https://example.com/#x)',
        '[missing](gone.md) [no heading](a.md#where-it-stands-2) [in code](a.md#not-a-heading) [here](#nowhere)',
        '`[not a link](gone.md)`',
        '# B',
      ].join('\n'),
    );
    assert.deepEqual(brokenLinks(dir, ['b.md']), [
      'b.md: gone.md (no file gone.md)',
      'b.md: a.md#where-it-stands-2 (no heading #where-it-stands-2 in a.md)',
      'b.md: a.md#not-a-heading (no heading #not-a-heading in a.md)',
      'b.md: #nowhere (no heading #nowhere in b.md)',
    ]);
    assert.equal(slug('Issue 27: the cold path (2026-12-02)'), 'issue-27-the-cold-path-2026-12-02');
    rmSync(dir, { recursive: true });
  });
});
