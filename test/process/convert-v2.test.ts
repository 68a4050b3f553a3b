// `convert --to v2`: every wadm fixture against its golden output and report (test/fixtures/v2/),
// the mapping rules that matter most, and the command's exit codes through the real binary entry.
// UPDATE_GOLDEN=1 rewrites the golden files; review the diff before committing it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import yaml from 'js-yaml';
import { convertTo, type ConvertToOptions } from '../../src/cli/convert-v2.js';
import { v2Problems } from '../../src/convert/check.js';
import { convertToV2 } from '../../src/convert/to-v2.js';
import { spreadShares } from '../../src/convert/placement.js';
import type { WorkloadDeployment } from '../../src/schema/v2.js';
import { validateParent, type ValidSpec } from '../../src/core/validate.js';
import { REPO_FIXTURES_DIR } from '../support/fixtures.js';
import { wasmApp, type Resource } from '../support/resources.js';

const ROOT = resolve(import.meta.dirname, '../..');
const GOLDEN = join(ROOT, 'test/fixtures/v2');
const dir = mkdtempSync(join(tmpdir(), 'convert-v2-'));
const FIXTURES = ['hello', 'daemonscaler', 'secrets-policy', 'shared-http', 'shared-http-dev', 'complex'];

function options(extra: Partial<ConvertToOptions> = {}): ConvertToOptions {
  return {
    namespace: 'default',
    defaultLattice: 'default',
    to: 'v2',
    namespaceGiven: undefined,
    httpHost: undefined,
    allowHosts: [],
    blobstoreBuckets: [],
    hostgroupFromRequirement: undefined,
    ...extra,
  };
}

/** The fixtures are read from the repo copy, and paths in the report are shown relative to the repo. */
function convertFixture(name: string, extra: Partial<ConvertToOptions> = {}) {
  const outcome = convertTo(join(REPO_FIXTURES_DIR, `${name}.yaml`), options(extra));
  return { ...outcome, stderr: outcome.stderr.replaceAll(`${ROOT}/`, '') };
}

function golden(file: string, actual: string): void {
  const path = join(GOLDEN, file);
  if (process.env['UPDATE_GOLDEN'] === '1') {
    mkdirSync(GOLDEN, { recursive: true });
    writeFileSync(path, actual);
  }
  assert.ok(existsSync(path), `${file} is missing (UPDATE_GOLDEN=1 writes it)`);
  assert.equal(actual, readFileSync(path, 'utf8'), `${file} differs from the golden file (UPDATE_GOLDEN=1 rewrites it)`);
}

/** A fixture converted with flags, checked against its `<name>.flags.*` golden files. */
function convertFlagged(name: string, extra: Partial<ConvertToOptions>) {
  const outcome = convertFixture(name, extra);
  golden(`${name}.flags.yaml`, outcome.stdout);
  golden(`${name}.flags.report.txt`, outcome.stderr);
  return outcome;
}

function app(res: Resource): ValidSpec {
  const validation = validateParent(res as never, 'default');
  assert.ok(validation.ok, JSON.stringify(validation));
  return validation.app;
}

const component = (name: string, traits: unknown[] = [], properties: Record<string, unknown> = {}) => ({
  name,
  type: 'component',
  properties: { image: `ghcr.io/acme/${name}:1.0.0`, ...properties },
  traits: [{ type: 'spreadscaler', properties: { instances: 2 } }, ...traits],
});
const provider = (name: string, traits: unknown[] = []) => ({
  name,
  type: 'capability',
  properties: { image: `ghcr.io/wasmcloud/${name}:1.0.0` },
  traits,
});
const link = (namespace: string, pkg: string, interfaces: string[], target: string) => ({
  type: 'link',
  properties: { namespace, package: pkg, interfaces, target: { name: target } },
});

describe('convert --to v2 on the wadm fixtures', () => {
  for (const name of FIXTURES) {
    it(`turns ${name}.yaml into the golden YAML and report, exits 3, and the output passes our v2 schemas`, () => {
      const { stdout, stderr, code } = convertFixture(name);
      assert.equal(code, 3, stderr);
      golden(`${name}.yaml`, stdout);
      golden(`${name}.report.txt`, stderr);
      assert.deepEqual(v2Problems(yaml.loadAll(stdout)), []);
    });
  }

  it('with --http-host and --allow-host, shared-http-dev needs no more input and exits 0: one wasi:http entry serves both directions', () => {
    const { stdout, stderr, code } = convertFlagged('shared-http-dev', {
      httpHost: 'hello.example.com',
      allowHosts: ['api.example.com'],
      namespaceGiven: 'apps',
    });
    assert.equal(code, 0, "the listen address is the host's: approximated, not a loss");
    assert.doesNotMatch(stderr, /needs input {2}/);
    const [deployment] = yaml.loadAll(stdout) as WorkloadDeployment[];
    assert.equal(deployment!.metadata.namespace, 'apps');
    assert.deepEqual(deployment!.spec.template.spec.hostInterfaces, [
      { namespace: 'wasi', package: 'http', interfaces: ['outgoing-handler', 'incoming-handler'], config: { host: 'hello.example.com' } },
    ]);
    assert.deepEqual(deployment!.spec.template.spec.components[0]!.localResources, { allowedHosts: ['api.example.com'] });
  });

  it('with --http-host, --blobstore-bucket and --hostgroup-from-requirement, complex needs only its ConfigMap', () => {
    const { stdout, stderr, code } = convertFlagged('complex', {
      httpHost: 'blobby.example.com',
      blobstoreBuckets: ['blobby'],
      hostgroupFromRequirement: 'region',
    });
    assert.equal(code, 3, 'ids, provider settings and the policy are still dropped');
    assert.deepEqual(
      stderr.split('\n').filter((line) => line.startsWith('  needs input')),
      [
        '  needs input   spec.components[0].properties.config[1]: named config "blobby-default-configuration-values" lives outside the application: create ConfigMap "blobby-default-configuration-values" with its values; the wasi:config hostInterface lists it in configFrom (every component of the workload sees it)',
      ],
    );
    assert.deepEqual(v2Problems(yaml.loadAll(stdout)), []);
  });

  it('splits complex.yaml by weighted spread as wadm does, each deployment with its spread as hostSelector', () => {
    const deployments = yaml.loadAll(convertFixture('complex').stdout) as WorkloadDeployment[];
    assert.deepEqual(
      deployments.map((d) => [d.metadata.name, d.spec.replicas, d.spec.template.spec.hostSelector]),
      [
        ['complex-eastcoast', 3, { region: 'us-brooks-east' }],
        ['complex-westcoast', 2, { region: 'us-taylor-west' }],
      ],
    );
  });
});

describe('the mapping', () => {
  it('merges incoming and outgoing wasi:http of several components into the one unnamed entry the operator allows', () => {
    const spec = {
      components: [
        component('api', [link('wasi', 'http', ['outgoing-handler'], 'client')]),
        component('worker', [link('wasi', 'http', ['outgoing-handler'], 'client'), link('wasi', 'keyvalue', ['store', 'atomics'], 'kv')]),
        provider('client'),
        provider('server', [link('wasi', 'http', ['incoming-handler'], 'api')]),
        provider('kv'),
      ],
    };
    const { resources, findings } = convertToV2(app(wasmApp.scratch().named('shop').with(spec).build()), {
      httpHost: 'shop.example.com',
      allowHosts: ['*'],
    });
    assert.deepEqual(resources[0]!.spec.template.spec.hostInterfaces, [
      { namespace: 'wasi', package: 'http', interfaces: ['outgoing-handler', 'incoming-handler'], config: { host: 'shop.example.com' } },
      { namespace: 'wasi', package: 'keyvalue', interfaces: ['store', 'atomics'] },
    ]);
    assert.deepEqual(
      resources[0]!.spec.template.spec.components.map((c) => c.localResources),
      [{ allowedHosts: ['*'] }, { allowedHosts: ['*'] }],
    );
    assert.deepEqual(v2Problems(resources), []);
    assert.deepEqual(
      findings.filter((f) => f.outcome !== 'mapped'),
      [],
    );
  });

  it('reports two unnamed entries of one package, which the operator rejects, and a duplicate name', () => {
    const spec = { components: [component('api')] };
    const [deployment] = convertToV2(app(wasmApp.scratch().named('twice').with(spec).build())).resources;
    const http = { namespace: 'wasi', package: 'http', interfaces: ['incoming-handler'] };
    const egress = { ...http, name: 'egress' };
    // Different versions are not duplicates, but the second unnamed entry still breaks the second rule.
    deployment!.spec.template.spec.hostInterfaces = [http, { ...http, version: '0.3.0', interfaces: ['handler'] }, egress, egress];
    assert.deepEqual(v2Problems([deployment, deployment]), [
      'resources[0].spec.template.spec.hostInterfaces[1]: a second unnamed entry of wasi:http; merge them or name one',
      'resources[0].spec.template.spec.hostInterfaces[3]: duplicates an earlier entry of wasi:http',
      'resources[1].metadata.name: "twice" is already used by an earlier resource',
      'resources[1].spec.template.spec.hostInterfaces[1]: a second unnamed entry of wasi:http; merge them or name one',
      'resources[1].spec.template.spec.hostInterfaces[3]: duplicates an earlier entry of wasi:http',
    ]);
  });

  it('exits 0 when every construct mapped', () => {
    const spec = {
      components: [
        component('api', [link('wasi', 'keyvalue', ['store'], 'kv'), link('wasi', 'logging', ['logging'], 'worker')]),
        component('worker'),
        provider('kv'),
      ],
    };
    const path = join(dir, 'faithful.yaml');
    writeFileSync(path, yaml.dump(wasmApp.scratch().named('faithful').inNamespace('team-a').with(spec).build()));
    const { code, stderr, stdout } = convertTo(path, options());
    assert.equal(code, 0, stderr);
    assert.match(stderr, /\n8 mapped, 0 approximated, 0 needs input, 0 dropped\n$/);
    const [deployment] = yaml.loadAll(stdout) as WorkloadDeployment[];
    assert.equal(deployment!.metadata.namespace, 'team-a', 'a resource keeps its own namespace');
  });

  it("takes the HTTP listen address as the host's (approximated): an HTTP application with --http-host exits 0", () => {
    const { code, stderr } = convertFixture('hello', { httpHost: 'hello.example.com' });
    assert.equal(code, 0, stderr);
    assert.match(
      stderr,
      /\n {2}approximated {2}spec\.components\[1\]\.traits\[0\]\.properties\.source\.config\[0\]: config "default-http" \(ADDRESS 127\.0\.0\.1:8080\): the listen address belongs to the host: start it with wash host --http-addr 127\.0\.0\.1:8080;/,
    );
    assert.match(stderr, /\n7 mapped, 1 approximated, 0 needs input, 0 dropped\n$/);
    const spec = {
      components: [
        component('api'),
        provider('server', [
          {
            type: 'link',
            properties: {
              namespace: 'wasi',
              package: 'http',
              interfaces: ['incoming-handler'],
              target: { name: 'api' },
              source: { config: [{ name: 'listen', properties: { address: '0.0.0.0:80', cors_allowed_origins: '*' } }] },
            },
          },
        ]),
      ],
    };
    const { findings } = convertToV2(app(wasmApp.scratch().named('cors').with(spec).build()), { httpHost: 'api.example.com' });
    assert.deepEqual(
      findings.filter((f) => f.outcome !== 'mapped').map((f) => `${f.outcome} ${f.path}`),
      ['dropped spec.components[1].traits[0].properties.source.config[0]'],
      'a setting beside the address is still lost',
    );
  });

  it('asks for the blobstore containers, which the v2 host refuses unless config.buckets lists them', () => {
    const blobLink = 'spec.components[0].traits[1]';
    const without = convertFixture('complex');
    assert.match(
      without.stderr,
      /\n {2}needs input {3}spec\.components\[0\]\.traits\[1\]: v2's NATS blobstore refuses every container not listed in config\.buckets .*: pass --blobstore-bucket NAME/,
    );
    const blobstoreOf = (stdout: string) =>
      (yaml.loadAll(stdout) as WorkloadDeployment[]).map((d) =>
        d.spec.template.spec.hostInterfaces!.find((h) => h.package === 'blobstore'),
      );
    assert.deepEqual(blobstoreOf(without.stdout), [
      { namespace: 'wasi', package: 'blobstore', interfaces: ['blobstore'] },
      { namespace: 'wasi', package: 'blobstore', interfaces: ['blobstore'] },
    ]);
    const { stdout, stderr } = convertFixture('complex', { blobstoreBuckets: ['blobby', 'thumbnails'] });
    const filled = { namespace: 'wasi', package: 'blobstore', interfaces: ['blobstore'], config: { buckets: 'blobby,thumbnails' } };
    assert.deepEqual(blobstoreOf(stdout), [filled, filled]);
    assert.ok(stderr.includes(`\n  mapped        ${blobLink}: config.buckets "blobby,thumbnails" from --blobstore-bucket`), stderr);
    assert.doesNotMatch(stderr, /--blobstore-bucket NAME/);
  });

  it('asks for host labels that spread requirements select, which a stock v2 host lacks, or selects by hostgroup', () => {
    const requirementLines = (stderr: string) => stderr.split('\n').filter((line) => line.includes('.requirements: '));
    const without = convertFixture('complex');
    assert.deepEqual(
      requirementLines(without.stderr).map((line) => line.split(' → ')[0]),
      [
        '  needs input   spec.components[0].traits[0].properties.spread[0].requirements: region=us-brooks-east',
        '  needs input   spec.components[0].traits[0].properties.spread[1].requirements: region=us-taylor-west',
      ],
    );
    assert.match(
      requirementLines(without.stderr)[0]!,
      /a stock v2 host carries only the label hostgroup, so nothing is placed until hosts also carry region=us-brooks-east; or pass --hostgroup-from-requirement region to select hosts by host group$/,
    );
    const grouped = convertFixture('complex', { hostgroupFromRequirement: 'region' });
    assert.deepEqual(
      (yaml.loadAll(grouped.stdout) as WorkloadDeployment[]).map((d) => d.spec.template.spec.hostSelector),
      [{ hostgroup: 'us-brooks-east' }, { hostgroup: 'us-taylor-west' }],
    );
    assert.deepEqual(requirementLines(grouped.stderr), [
      '  mapped        spec.components[0].traits[0].properties.spread[0].requirements: region=us-brooks-east → hostSelector hostgroup=us-brooks-east: runs on hosts started with wash host --host-group us-brooks-east',
      '  mapped        spec.components[0].traits[0].properties.spread[1].requirements: region=us-taylor-west → hostSelector hostgroup=us-taylor-west: runs on hosts started with wash host --host-group us-taylor-west',
    ]);
    const spread = (requirements: Record<string, string>) => ({
      name: 'api',
      type: 'component',
      properties: { image: 'ghcr.io/acme/api:1.0.0' },
      traits: [{ type: 'spreadscaler', properties: { instances: 2, spread: [{ name: 'one', requirements }] } }],
    });
    const convert = (requirements: Record<string, string>, hostgroupFromRequirement?: string) =>
      convertToV2(
        app(
          wasmApp
            .scratch()
            .named('placed')
            .with({ components: [spread(requirements)] })
            .build(),
        ),
        { hostgroupFromRequirement },
      );
    const v1Group = convert({ hostgroup: 'edge' }, 'region');
    assert.deepEqual(v1Group.resources[0]!.spec.template.spec.hostSelector, { hostgroup: 'edge' });
    assert.deepEqual(
      v1Group.findings.map((f) => f.outcome),
      ['mapped', 'mapped', 'mapped', 'mapped'],
      'a v1 requirement on hostgroup already matches stock hosts',
    );
    const zoned = convert({ region: 'east', zone: 'a' }, 'region');
    assert.deepEqual(zoned.resources[0]!.spec.template.spec.hostSelector, { zone: 'a', hostgroup: 'east' });
    const needs = zoned.findings.filter((f) => f.outcome === 'needs input').map((f) => f.detail);
    assert.equal(needs.length, 1);
    assert.match(needs[0]!, /until hosts also carry zone=a$/, 'the other labels are still needed, and the flag is already given');
  });

  it('lists store and reveal in the wasmcloud:secrets hostInterface, as the v2 host serves both', () => {
    const [deployment] = yaml.loadAll(convertFixture('secrets-policy').stdout) as WorkloadDeployment[];
    assert.deepEqual(deployment!.spec.template.spec.hostInterfaces, [
      { namespace: 'wasmcloud', package: 'secrets', interfaces: ['store', 'reveal'], secretFrom: [{ name: 'sample-secrets' }] },
    ]);
  });

  it("says that v2 keyvalue uses the bucket the component opens by name, and asks for v1's link bucket", () => {
    const kvLink = (config?: Record<string, string>) => ({
      type: 'link',
      properties: {
        namespace: 'wasi',
        package: 'keyvalue',
        interfaces: ['store', 'atomics'],
        target: { name: 'kv', ...(config ? { config: [{ name: 'kv-bucket', properties: config }] } : {}) },
      },
    });
    const convert = (config?: Record<string, string>) =>
      convertToV2(
        app(
          wasmApp
            .scratch()
            .named('counter')
            .with({ components: [component('api', [kvLink(config)]), provider('kv')] })
            .build(),
        ),
      ).findings;
    const [needs] = convert({ BUCKET: 'counters' }).filter((f) => f.outcome === 'needs input');
    assert.match(needs!.detail, /the component must open "counters" to keep v1's data, and that JetStream KV bucket must exist$/);
    const plain = convert().find((f) => f.path === 'spec.components[0].traits[1]')!;
    assert.equal(plain.outcome, 'mapped');
    assert.match(plain.detail, /v2 uses the bucket the component opens by name \(wasi:keyvalue\/store open\)/);
    assert.deepEqual(
      convert({ BUCKET: 'counters', tls_ca: 'x' })
        .filter((f) => f.path.includes('.config['))
        .map((f) => `${f.outcome}: ${f.detail.split(':')[0]}`),
      ['needs input: config "kv-bucket" (BUCKET counters)', 'dropped: config "kv-bucket"'],
    );
  });

  it('claims no loss for interface versions: the v2 host linked every fixture without them', () => {
    for (const name of FIXTURES) {
      const { stdout, stderr } = convertFixture(name);
      const interfaces = (yaml.loadAll(stdout) as (WorkloadDeployment | null)[]).flatMap((d) => d?.spec.template.spec.hostInterfaces ?? []);
      assert.deepEqual(
        interfaces.filter((h) => h.version !== undefined),
        [],
        `${name}: the hosts pick their versions`,
      );
      const linkLosses = stderr.split('\n').filter((line) => /\.traits\[\d+\]/.test(line) && !line.startsWith('  mapped'));
      assert.deepEqual(
        linkLosses.filter((line) => /version/i.test(line)),
        [],
        `${name}: no link finding is about a version`,
      );
    }
  });

  it('drops custom providers, file:// images and shared components, each with the field and the reason', () => {
    const spec = {
      components: [
        component('api', [link('acme', 'billing', ['invoices'], 'billing')]),
        component('local', [], { image: 'file:///tmp/local.wasm' }),
        { name: 'borrowed', type: 'component', properties: { application: { name: 'common', component: 'auth' } } },
        provider('billing'),
      ],
    };
    const { findings } = convertToV2(app(wasmApp.scratch().named('mixed').with(spec).build()));
    const drops = findings.filter((f) => f.outcome === 'dropped').map((f) => f.path);
    assert.deepEqual(drops, [
      'spec.components[0].traits[1]',
      'spec.components[1].properties.image',
      'spec.components[2].properties.application',
      'spec.components[3]',
    ]);
  });

  it('asks for a second workload when one import is served by two components, which v2 rejects', () => {
    const named = (target: string, name: string) => ({
      type: 'link',
      properties: { namespace: 'acme', package: 'auth', interfaces: ['check'], target: { name: target }, name },
    });
    const spec = {
      components: [component('api', [named('auth-a', 'default'), named('auth-b', 'fallback')]), component('auth-a'), component('auth-b')],
    };
    const { findings } = convertToV2(app(wasmApp.scratch().named('twin').with(spec).build()));
    assert.deepEqual(
      findings.filter((f) => f.outcome !== 'mapped').map((f) => `${f.outcome} ${f.path}`),
      ['needs input spec.components[0].traits[2]', 'dropped spec.components[0].traits[2].properties.name'],
    );
  });

  it('turns suspend into zero replicas and reports the WasmCloudApplication fields v2 has no place for', () => {
    const spec = {
      components: [component('api')],
      suspend: true,
      lattice: 'prod',
      deletionPolicy: 'Orphan',
      revisionHistoryLimit: 3,
      version: 'v1',
    };
    const { resources, findings } = convertToV2(app(wasmApp.scratch().named('paused').with(spec).build()));
    assert.equal(resources[0]!.spec.replicas, 0);
    assert.deepEqual(
      findings.filter((f) => f.path.startsWith('spec.') && !f.path.startsWith('spec.components')).map((f) => `${f.outcome} ${f.path}`),
      [
        'dropped spec.deletionPolicy',
        'dropped spec.lattice',
        'dropped spec.revisionHistoryLimit',
        'approximated spec.suspend',
        'dropped spec.version',
      ],
    );
  });

  it('splits instances across spreads exactly as wadm: by weight, rounded down, the rest from the heaviest spread on', () => {
    assert.deepEqual(spreadShares(5, [40, 40]), [3, 2]);
    assert.deepEqual(spreadShares(3, [40, 20]), [2, 1]);
    assert.deepEqual(spreadShares(7, [100, 100, 100]), [3, 2, 2]);
    assert.deepEqual(spreadShares(4, [10, 30]), [1, 3]);
    assert.deepEqual(spreadShares(2, [0, 0]), [1, 1]);
  });
});

describe('docs/migrating-to-v2.md', () => {
  it('shows the output and the report that convert --to v2 prints for its example', () => {
    const section = readFileSync(join(ROOT, 'docs/migrating-to-v2.md'), 'utf8');
    const [command, ...report] = section.split('```console\n')[1]!.split('```')[0]!.trimEnd().split('\n');
    const args = command!
      .replace(/^\$ wasmcloud-metacontroller convert /, '')
      .replace(/ > \S+$/, '')
      .split(' ');
    const outcome = convertTo(join(ROOT, args[0]!), options({ httpHost: args[args.indexOf('--http-host') + 1] }));
    assert.deepEqual(args.slice(1, 4), ['--to', 'v2', '--http-host'], 'the example uses only the options this test reads');
    assert.equal(outcome.stderr.replaceAll(`${ROOT}/`, ''), report.join('\n') + '\n');
    assert.equal(outcome.stdout, section.split('```yaml\n')[1]!.split('```')[0]);
  });
});

describe('the command line', () => {
  const cli = (args: string[], input?: string) => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], { cwd: ROOT, encoding: 'utf8', input });
    return { code: run.status, stdout: run.stdout, stderr: run.stderr };
  };

  it('reads several documents from standard input, WasmCloudApplications and wadm manifests alike', () => {
    const input = [yaml.dump(wasmApp('secrets-policy.yaml').build()), readFileSync(join(REPO_FIXTURES_DIR, 'hello.yaml'), 'utf8')].join(
      '---\n',
    );
    const { code, stdout, stderr } = cli(['convert', '-', '--to', 'v2', '--http-host', 'hello.localhost'], input);
    assert.equal(code, 3, stderr);
    assert.deepEqual(
      (yaml.loadAll(stdout) as WorkloadDeployment[]).map((d) => `${d.metadata.namespace}/${d.metadata.name}`),
      ['default/sample', 'undefined/hello-world'],
    );
    assert.match(stderr, /^-\[0\]: WasmCloudApplication sample → WorkloadDeployment sample\n/);
    assert.match(stderr, /\n-\[1\]: wadm Application hello-world → WorkloadDeployment hello-world\n/);
  });

  it('takes --blobstore-bucket, repeated, as the v2 conversion', () => {
    const file = join(REPO_FIXTURES_DIR, 'complex.yaml');
    const { code, stdout, stderr } = cli(['convert', file, '--blobstore-bucket', 'blobby', '--blobstore-bucket', 'cache']);
    assert.equal(code, 2, 'without --to v2 the target is missing');
    assert.equal(stdout, '');
    assert.match(stderr, /the only target is v2/);
    const v2 = cli(['convert', file, '--to', 'v2', '--blobstore-bucket', 'blobby', '--blobstore-bucket', 'cache']);
    assert.match(v2.stdout, /\n {10}config:\n {12}buckets: blobby,cache\n/);
  });

  it('exits 1 on invalid input and prints no resources', () => {
    const { code, stdout, stderr } = cli(['convert', join(REPO_FIXTURES_DIR, 'invalid-dangling-link.yaml'), '--to', 'v2']);
    assert.equal(code, 1);
    assert.equal(stdout, '');
    assert.match(
      stderr,
      /spec\.components\[0\]\.traits\[1\]\.properties\.target: link target "httpclient" is not a component of this application/,
    );
  });

  it('refuses an unknown target and malformed flag values with exit 2, before reading the file', () => {
    const missing = join(dir, 'missing.yaml');
    assert.equal(convertTo(missing, options({ to: 'v3' })).code, 2);
    assert.equal(convertTo(missing, options({ allowHosts: ['api.example.com', 'https://x.example/path'] })).code, 2);
    assert.equal(convertTo(missing, options({ httpHost: 'https://x.example' })).code, 2);
    assert.equal(convertTo(missing, options({ blobstoreBuckets: ['blobby', 'a,b'] })).code, 2, 'config.buckets is comma-separated');
    assert.equal(convertTo(missing, options({ hostgroupFromRequirement: 'region=east' })).code, 2);
  });

  it('without --to, convert still turns a wadm manifest into a WasmCloudApplication', () => {
    const { code, stdout } = cli(['convert', join(REPO_FIXTURES_DIR, 'hello.yaml')]);
    assert.equal(code, 0);
    assert.equal((yaml.load(stdout) as Resource).kind, 'WasmCloudApplication');
  });
});
