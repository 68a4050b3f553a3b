// The user pages say what the code does where a user acts on them: a metric name pasted into a
// query, a route, a setting, the Kubernetes minimum, a command's exit code, a log line to grep for,
// a reason's remedy. Each check reads the code's own source of truth, so the two cannot drift.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import yaml from 'js-yaml';
import { REASONS, type Reason } from '../../src/core/reasons.js';
import { parseCommandLine, USAGE } from '../../src/cli/index.js';
import { loadConfig } from '../../src/plumbing/config.js';
import { build } from '../support/http.js';
import { exposedSeries, metricFamilies, METRIC_PREFIX } from '../support/metric-names.js';
import { freePort } from '../support/ports.js';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(resolve(ROOT, path), 'utf8');
/** The pages a user reads to install, run and fix the service (docs/development.md and the benchmarks are for contributors). */
const USER_PAGES = [
  'README.md',
  'SECURITY.md',
  'examples/README.md',
  ...[
    'install',
    'configuration',
    'resource',
    'lattice',
    'troubleshooting',
    'cli',
    'hooks',
    'operations',
    'how-it-works',
    'migrating-to-v2',
  ].map((page) => `docs/${page}.md`),
];
/** The changelog's Unreleased section, which users read before they upgrade. */
const unreleased = () => {
  const changelog = read('CHANGELOG.md');
  return changelog.slice(changelog.indexOf('## [Unreleased]'), changelog.indexOf('\n## [', changelog.indexOf('## [Unreleased]') + 1));
};
const READ_BY_USERS = () => [...USER_PAGES.map((page) => ({ page, text: read(page) })), { page: 'CHANGELOG.md', text: unreleased() }];

/** The section of a page under a heading, up to the next heading of the same or a higher level. */
function section(page: string, heading: string): string {
  const text = read(page);
  const start = text.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `${page} has no heading "${heading}"`);
  const level = heading.split(' ')[0]!;
  const next = text.slice(start + 1).search(new RegExp(`\\n#{1,${level.length}} `));
  return next < 0 ? text.slice(start) : text.slice(start, start + 1 + next);
}

/** The rows of the first table in a text, as arrays of cells (header and separator left out). */
function rows(text: string): string[][] {
  const table = text.slice(text.indexOf('\n|') + 1).split('\n\n')[0]!;
  return table
    .split('\n')
    .slice(2)
    .filter((row) => row.startsWith('|'))
    .map((row) => row.split(' | ').map((cell) => cell.replace(/^\| ?| ?\|$/g, '')));
}

describe('metric names on the user pages', () => {
  it('carry the prefix and name series the service exposes, so that a pasted query finds them', async () => {
    // A histogram's family name is what its documentation names; a query adds _bucket, _count or _sum.
    const exposed = new Set([...(await exposedSeries()), ...(await metricFamilies()).map((f) => f.name)]);
    const bare = new Set([...exposed].map((name) => name.slice(METRIC_PREFIX.length)));
    const problems: string[] = [];
    for (const { page, text } of READ_BY_USERS()) {
      for (const [name] of text.matchAll(/wasmcloud_metacontroller_[a-z_]+/g))
        if (!exposed.has(name) && name !== 'wasmcloud_metacontroller_') problems.push(`${page}: ${name} is not exposed`);
      for (const [, name] of text.matchAll(/`([a-z_]+)(?:\{[^`]*\})?`/g))
        if (bare.has(name!)) problems.push(`${page}: \`${name}\` lacks the prefix ${METRIC_PREFIX}`);
    }
    assert.deepEqual(problems, []);
  });

  it("are each explained in docs/operations.md's table of series", async () => {
    const table = section('docs/operations.md', '## Metrics and logs');
    const ours = (await metricFamilies(false)).map((f) => f.name);
    assert.ok(ours.length >= 15);
    for (const name of ours) assert.ok(table.includes(`\`${name}`), `${name} is not in the table of series`);
  });
});

describe('docs/operations.md, its alerts', () => {
  it('has a row for every alert of the PrometheusRule', () => {
    const rule = yaml.load(read('manifests/monitoring/prometheusrule.yaml')) as { spec: { groups: { rules: { alert: string }[] }[] } };
    const alerts = rule.spec.groups.flatMap((group) => group.rules.map((r) => r.alert));
    const documented = rows(section('docs/operations.md', '## Alerts')).map((row) => row[0]);
    assert.deepEqual(
      documented,
      alerts.map((alert) => `\`${alert}\``),
    );
  });
});

describe("docs/hooks.md's route table", () => {
  it('has exactly the routes the server serves', async (t) => {
    const { app } = build(t);
    await app.ready();
    const served = [...app.printRoutes({ commonPrefix: false }).matchAll(/(\/\S*) \(([A-Z]+)/g)].map(
      ([, path, method]) => `${method} ${path}`,
    );
    assert.ok(served.length >= 6, served.join(', '));
    const documented = rows(read('docs/hooks.md')).map((row) => row[0]!.replaceAll('`', ''));
    assert.deepEqual(documented.sort(), served.sort());
  });
});

describe('docs/install.md', () => {
  it('names every variable that manifests/config.env sets, where it describes the ConfigMap', () => {
    const set = [...read('manifests/config.env').matchAll(/^([A-Z_]+)=/gm)].map(([, name]) => name!);
    assert.ok(set.includes('NATS_URL') && set.includes('HOOK_TIMEOUT'), set.join(', '));
    const page = read('docs/install.md');
    const settings = page.slice(page.indexOf('**Its settings.**')).split('\n\n')[0]!;
    for (const name of set) assert.ok(settings.includes(`\`${name}\``), `docs/install.md's settings do not name ${name}`);
  });

  it("states the chart's Kubernetes minimum among the prerequisites, and no page states another", () => {
    const minimum = /^kubeVersion: ">=(\d+\.\d+)\.\d+(?:-0)?"$/m.exec(read('charts/wasmcloud-metacontroller/Chart.yaml'))?.[1];
    assert.ok(minimum, "Chart.yaml's kubeVersion is not >=X.Y.Z");
    assert.ok(section('docs/install.md', '## Prerequisites').includes(`Kubernetes ${minimum} or later`));
    for (const { page, text } of READ_BY_USERS())
      for (const [claim, version] of text.matchAll(/Kubernetes[^.]{0,60}?\b(\d+\.\d+) or later/g))
        assert.equal(version, minimum, `${page}: ${claim}`);
  });
});

describe("the image's Node.js on the user pages", () => {
  const dockerfile = read('Dockerfile');
  const arg = (name: string) => new RegExp(`^ARG ${name}=(\\S+)$`, 'm').exec(dockerfile)![1]!;
  // The file sources scripts/node-lines.env for the line's pin: bash reads it as the scripts do.
  const [nodeVersion, npmVersion] = spawnSync('bash', ['-c', '. scripts/image-node.env && echo "$NODE_VERSION $NPM_VERSION"'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .stdout.trim()
    .split(' ');

  it("docs/install.md names the Dockerfile's bases and the stand-ins' Node.js and npm", () => {
    const page = read('docs/install.md').replace(/\s+/g, ' ');
    assert.ok(page.includes(`on \`${arg('NODE_IMAGE')}\` (build argument \`NODE_IMAGE\`)`), arg('NODE_IMAGE'));
    assert.ok(page.includes(`onto \`${arg('RUNTIME_IMAGE')}\` (\`RUNTIME_IMAGE\`;`), arg('RUNTIME_IMAGE'));
    const standIns = `with Node.js ${nodeVersion} and npm ${npmVersion} from the npm registry`;
    assert.ok(page.includes(standIns), standIns);
  });

  it("docs/operations.md's example of the build_info series names it", () => {
    assert.match(read('docs/operations.md'), new RegExp(`_build_info\\{version="[^"]+",node="v${nodeVersion}"\\} 1`));
  });
});

describe('the user pages', () => {
  it('name no internal issue number and no machine of the project', () => {
    for (const { page, text } of READ_BY_USERS()) {
      assert.doesNotMatch(text, /\bissues? ?#?\d+/i, page);
      assert.doesNotMatch(text, /\bthis machine\b|\b\d-core machine\b|project's (?:\S+ )?machine/i, page);
    }
  });
});

describe('the commands that ask wadm', () => {
  const commands = { status: ['status', 'hello-world'], diff: ['diff', resolve(ROOT, 'examples/apps/hello-world.yaml')], list: ['list'] };
  const usage = USAGE.replace(/\s+/g, ' ');
  const cli = read('docs/cli.md').replace(/\s+/g, ' ');
  /** A command's entry in --help: its line and the indented lines that continue it. */
  const help = (name: string) => {
    const lines = USAGE.split('\n');
    const first = lines.findIndex((line) => line.startsWith(`  ${name} `));
    const rest = lines.slice(first + 1).findIndex((line) => !line.startsWith(' '.repeat(8)));
    return lines
      .slice(first, first + 1 + rest)
      .join(' ')
      .replace(/\s+/g, ' ');
  };

  it('take the lattice as an option, in --help and in docs/cli.md', () => {
    for (const name of Object.keys(commands)) {
      assert.match(usage, new RegExp(` ${name}(?: [A-Z]+)? \\[--lattice L\\]`), `--help: ${name}`);
      assert.match(cli, new RegExp(`\`${name} [^\`]*\\[--lattice L\\]`), `docs/cli.md: ${name}`);
    }
  });

  it('exit 2 when NATS cannot be reached, as --help and docs/cli.md say', async () => {
    const closed = `nats://127.0.0.1:${await freePort()}`;
    for (const [name, args] of Object.entries(commands)) {
      const invocation = parseCommandLine(args);
      const loaded = loadConfig({ NATS_URL: closed });
      assert.ok(invocation.command === 'run' && loaded.ok, name);
      const outcome = await invocation.run(loaded.config);
      assert.equal(outcome.code, 2, `${name}: ${outcome.stderr}`);
      assert.match(outcome.stderr, /^cannot connect to NATS at /, name);
      assert.match(help(name), /\b2 when [^;.]*NATS or wadm cannot be reached/, `--help of ${name}: ${help(name)}`);
      const bullet = cli.slice(cli.indexOf(`- \`${name} `)).split(' - `')[0]!;
      assert.match(bullet, /\b2 when [^;]*NATS or wadm cannot be reached/, `docs/cli.md on ${name}`);
    }
  });
});

describe('docs/troubleshooting.md', () => {
  const page = read('docs/troubleshooting.md');
  const shell = [...page.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap(([, block]) => block!.trim().split('\n'));

  it('says what to do for every reason someone must act on', () => {
    const covered = rows(section('docs/troubleshooting.md', '## Status reasons')).flatMap((row) =>
      [...row[0]!.matchAll(/`(\w+)`/g)].map(([, reason]) => reason!),
    );
    const actionable = (Object.keys(REASONS) as Reason[]).filter((reason) => REASONS[reason].fixedBy !== 'nobody');
    assert.deepEqual([...covered].sort(), [...actionable].sort());
  });

  it("runs the CLI in a pod with the image's own node and entrypoint", () => {
    const dockerfile = read('Dockerfile');
    const entrypoint = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)![1]!) as string[];
    const workdir = [...dockerfile.matchAll(/^WORKDIR (\S+)$/gm)].at(-1)![1];
    assert.equal(workdir, '/app', 'the relative script path below assumes the final stage works in /app');
    const execs = shell.filter((line) => / exec /.test(line));
    assert.ok(execs.length >= 2);
    for (const line of execs) {
      const argv = line.split(' -- ')[1]!.split(' ');
      assert.deepEqual(
        argv.slice(0, 2),
        entrypoint.filter((arg) => !arg.startsWith('--')),
        line,
      );
    }
  });

  it("names the service's objects as manifests/ creates them", () => {
    const objects = ['namespace', 'deployment', 'service', 'networkpolicy'].flatMap((file) =>
      (yaml.loadAll(read(`manifests/${file}.yaml`)) as { kind: string; metadata: { name: string; namespace?: string } }[]).filter(Boolean),
    );
    const has = (kind: string, name: string) => objects.some((o) => o.kind === kind && o.metadata.name === name);
    const kinds: Record<string, string> = {
      deploy: 'Deployment',
      deployment: 'Deployment',
      networkpolicy: 'NetworkPolicy',
      service: 'Service',
    };
    const ours = shell.filter((line) => line.startsWith('kubectl -n wasmcloud-metacontroller '));
    assert.ok(has('Namespace', 'wasmcloud-metacontroller') && ours.length >= 8);
    for (const line of ours) {
      for (const [, kind, name] of line.matchAll(/\b(deploy|deployment|service|networkpolicy)(?:\/| )([a-z][\w-]*)/g))
        assert.ok(has(kinds[kind!]!, name!), `${line}: no ${kinds[kind!]} ${name} in manifests/`);
      for (const [, label] of line.matchAll(/-l (\S+)/g))
        assert.equal(label, 'app.kubernetes.io/name=wasmcloud-metacontroller', `${line}: the pods' label`);
    }
  });

  it('shows a log line as the service writes it', async (t) => {
    const example = JSON.parse(section('docs/troubleshooting.md', '## Logs').split('```json\n')[1]!.split('\n```')[0]!) as Record<
      string,
      unknown
    >;
    const { app, lines } = build(t, { authorize: () => false });
    const response = await app.inject({ method: 'POST', url: '/sync', payload: {}, remoteAddress: String(example['remote']) });
    assert.equal(response.statusCode, 401);
    const line = lines.find((l) => l['msg'] === example['msg']);
    assert.deepEqual({ ...line, time: 0 }, { ...example, time: 0 });
    assert.deepEqual(Object.keys(line!), Object.keys(example));
  });
});
