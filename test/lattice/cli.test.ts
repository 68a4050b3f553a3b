// The command-line tool: each command through the real binary entry (src/main.ts), with good and
// bad files; `status` against a real nats-server, the real wadm and a simulated host.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import yaml from 'js-yaml';
import { fixturePath } from '../support/fixtures.js';
import { wasmApp } from '../support/resources.js';
import { condition } from '../support/metacontroller.js';
import { startScenario, WADM_WAIT, type Scenario } from '../support/scenario.js';
import { validate } from '../../src/cli/validate.js';

const ROOT = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'cli-'));

function cli(args: string[], env: Record<string, string> = {}) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', resolve(ROOT, 'src/main.ts'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** For commands that need this process to keep serving (the service under test runs here). */
function cliAsync(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', resolve(ROOT, 'src/main.ts'), ...args], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

function file(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : yaml.dump(content));
  return path;
}

describe('validate', () => {
  it('accepts valid resources, several documents in one file, and says which version each renders to', () => {
    const two = file('two.yaml', [wasmApp().build(), wasmApp('complex.yaml').build()].map((r) => yaml.dump(r)).join('---\n'));
    const { code, stdout } = cli(['validate', two, 'examples/apps/hello-world.yaml']);
    assert.equal(code, 0, stdout);
    assert.deepEqual(stdout.trim().split('\n'), [
      `${two}[0]: WasmCloudApplication default/hello-world: valid, version sha-72ddc1eef3fe1252`,
      `${two}[1]: WasmCloudApplication default/complex: valid, version ${/version (\S+)/.exec(stdout.split('\n')[1]!)![1]}`,
      'examples/apps/hello-world.yaml: WasmCloudApplication default/hello-world: valid, version sha-72ddc1eef3fe1252',
    ]);
  });

  it('names the file, the resource and the field of every error, and exits 1', () => {
    const bad = wasmApp().build();
    (bad.spec['components'] as Record<string, unknown>[])[0]!['name'] = 'httpserver';
    const path = file('bad.yaml', bad);
    const { code, stdout } = cli(['validate', path]);
    assert.equal(code, 1);
    assert.deepEqual(stdout.trim().split('\n'), [
      `${path}: WasmCloudApplication default/hello-world: spec.components[1].name: duplicate component name "httpserver" (first used by spec.components[0])`,
      `${path}: WasmCloudApplication default/hello-world: spec.components[1].traits[0].properties.target: link target "http-component" is not a component of this application`,
    ]);
  });

  it('refuses a wadm manifest, pointing to convert, and files that cannot be read', () => {
    const { code, stdout } = cli(['validate', fixturePath('hello.yaml'), join(dir, 'missing.yaml'), file('broken.yaml', 'a: [')]);
    assert.equal(code, 1);
    const lines = stdout.trim().split('\n');
    assert.match(
      lines[0]!,
      /hello\.yaml: Application default\/hello-world: a wadm manifest, not a WasmCloudApplication; turn it into one with: wasmcloud-metacontroller convert FILE/,
    );
    assert.match(lines[1]!, /missing\.yaml: file: cannot read: ENOENT/);
    assert.match(lines[2]!, /broken\.yaml: file: cannot read: unexpected end of the stream/);
  });

  it('checks the applications of a kustomize stream on stdin and skips other kinds with a count', () => {
    const other = (kind: string, name: string) => ({ apiVersion: 'v1', kind, metadata: { name } });
    const docs = [
      other('Namespace', 'apps'),
      wasmApp().build(),
      other('ConfigMap', 'c'),
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } },
    ];
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', 'validate', '-'], {
      cwd: ROOT,
      encoding: 'utf8',
      input: docs.map((d) => yaml.dump(d)).join('---\n'),
    });
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.deepEqual(run.stdout.trim().split('\n'), [
      '-[1]: WasmCloudApplication default/hello-world: valid, version sha-72ddc1eef3fe1252',
      'skipped 3 documents of other kinds',
    ]);
    assert.doesNotMatch(run.stdout, /convert/);
  });

  it('says which apiVersion a WasmCloudApplication needs, and fails a stream without any', () => {
    const wrong = { ...wasmApp().build(), apiVersion: 'core.wasmcloud.com/v1' };
    const { code, stdout } = cli(['validate', file('wrong-version.yaml', wrong)]);
    assert.equal(code, 1);
    assert.match(
      stdout,
      /WasmCloudApplication default\/hello-world: apiVersion "core\.wasmcloud\.com\/v1" is not served: a WasmCloudApplication has apiVersion core\.wasmcloud\.com\/v1beta1\n$/,
    );
    const none = cli(['validate', file('no-apps.yaml', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } })]);
    assert.equal(none.code, 1);
    assert.equal(none.stdout, 'skipped 1 document of other kinds\n');
    assert.equal(none.stderr, 'no WasmCloudApplication found\n');
  });

  it('warns of an unknown trait type with the nearest known one, and fails on it with --strict', () => {
    const typo = wasmApp().build();
    const traits = (typo.spec['components'] as { traits: { type: string }[] }[])[0]!.traits;
    traits[0]!.type = 'spredscaler';
    traits.push({ type: 'example.com/autoscaler', properties: {} } as { type: string });
    const path = file('typo.yaml', typo);
    const warned = cli(['validate', path]);
    assert.equal(warned.code, 0, warned.stdout);
    assert.deepEqual(warned.stdout.trim().split('\n'), [
      `${path}: WasmCloudApplication default/hello-world: warning: spec.components[0].traits[0].type: unknown trait type "spredscaler", which wadm ignores; did you mean "spreadscaler"?`,
      `${path}: WasmCloudApplication default/hello-world: warning: spec.components[0].traits[${traits.length - 1}].type: unknown trait type "example.com/autoscaler", which wadm ignores`,
      `${path}: WasmCloudApplication default/hello-world: valid, version ${/version (\S+)/.exec(warned.stdout)![1]}`,
    ]);
    const strict = cli(['validate', '--strict', path]);
    assert.equal(strict.code, 1);
    assert.match(
      strict.stdout,
      /: WasmCloudApplication default\/hello-world: spec\.components\[0\]\.traits\[0\]\.type: unknown trait type "spredscaler"/,
    );
    assert.doesNotMatch(strict.stdout, /valid, version/);
  });

  it('reads standard input with -', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', 'validate', '-'], {
      cwd: ROOT,
      encoding: 'utf8',
      input: yaml.dump(wasmApp().build()),
    });
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /^-: WasmCloudApplication default\/hello-world: valid/);
  });
});

describe('validate against NATS max_payload', () => {
  it('refuses, as the hook would, a manifest larger than --max-payload (default 1 MiB), naming both sizes', () => {
    const big = wasmApp().build();
    const components = (big.spec as { components: { properties: Record<string, unknown> }[] }).components;
    components[0]!.properties['config'] = [{ name: 'blob', properties: { data: 'x'.repeat(1.1 * 1024 * 1024) } }];
    const path = file('big.yaml', big);
    const tooBig = validate([path], { namespace: 'default', defaultLattice: 'default' });
    assert.equal(tooBig.code, 1);
    assert.match(
      tooBig.stdout,
      /ManifestTooLarge: the rendered manifest is \d+ bytes, more than the NATS server's max_payload of 1048576 bytes/,
    );

    const hello = file('small.yaml', wasmApp().build());
    assert.equal(validate([hello], { namespace: 'default', defaultLattice: 'default' }).code, 0);
    const strict = validate([hello], { namespace: 'default', defaultLattice: 'default', maxPayloadBytes: 500 });
    assert.equal(strict.code, 1);
    assert.match(strict.stdout, /max_payload of 500 bytes/);
  });
});

describe('render', () => {
  it('prints the exact manifest the hook would put, with its version', () => {
    const { code, stdout, stderr } = cli(['render', 'examples/apps/hello-world.yaml']);
    assert.equal(code, 0);
    assert.equal(stderr, 'version sha-72ddc1eef3fe1252\n');
    const manifest = JSON.parse(stdout) as { metadata: { annotations: Record<string, string> } };
    assert.equal(manifest.metadata.annotations['version'], 'sha-72ddc1eef3fe1252');
    assert.equal(manifest.metadata.annotations['core.wasmcloud.com/owner'], 'default/hello-world');
  });

  it('refuses an invalid resource with the field, and a file of several resources', () => {
    assert.match(cli(['render', fixturePath('hello.yaml')]).stderr, /not a WasmCloudApplication/);
    const two = file('render-two.yaml', [wasmApp().build(), wasmApp().build()].map((r) => yaml.dump(r)).join('---\n'));
    const { code, stderr } = cli(['render', two]);
    assert.equal(code, 1);
    assert.match(stderr, /expected one WasmCloudApplication, found 2 documents/);
  });
});

describe('convert', () => {
  it('turns a wadm manifest into a WasmCloudApplication that validates, changing only apiVersion and kind', () => {
    const { code, stdout } = cli(['convert', fixturePath('hello.yaml'), '--namespace', 'apps']);
    assert.equal(code, 0);
    const resource = yaml.load(stdout) as Record<string, unknown>;
    const original = yaml.load(cli(['convert', fixturePath('hello.yaml')]).stdout) as Record<string, unknown>;
    assert.equal(resource['apiVersion'], 'core.wasmcloud.com/v1beta1');
    assert.equal(resource['kind'], 'WasmCloudApplication');
    assert.deepEqual(resource['spec'], original['spec']);
    assert.equal((resource['metadata'] as Record<string, unknown>)['namespace'], 'apps');
    assert.equal(cli(['validate', file('converted.yaml', stdout)]).code, 0);
  });

  it('with --adopt, makes a resource that takes over the application in the given lattice, unpinned', () => {
    const pinned = yaml.load(readFileSync(fixturePath('hello.yaml'), 'utf8')) as { metadata: { annotations: Record<string, string> } };
    pinned.metadata.annotations['version'] = 'v1.0.0';
    const { code, stdout, stderr } = cli(['convert', file('pinned.yaml', pinned), '--adopt', '--lattice', 'prod', '-n', 'apps']);
    assert.equal(code, 0, stderr);
    const resource = yaml.load(stdout) as { metadata: { annotations: Record<string, string> }; spec: Record<string, unknown> };
    assert.equal(resource.metadata.annotations['core.wasmcloud.com/adopt'], 'true');
    assert.equal(resource.metadata.annotations['version'], undefined, 'wadm never puts v1.0.0 twice: the version is not pinned');
    assert.equal(resource.spec['lattice'], 'prod');
    assert.match(stderr, /not pinned to version "v1\.0\.0", which wash put/);
    const plain = yaml.load(cli(['convert', fixturePath('hello.yaml')]).stdout) as { spec: Record<string, unknown> };
    assert.deepEqual({ ...resource.spec, lattice: undefined }, { ...plain.spec, lattice: undefined }, 'the workload is unchanged');
    assert.equal(cli(['validate', file('adopting.yaml', stdout)]).code, 0);
  });

  it('refuses --adopt with --to v2, which makes no resource of this service', () => {
    const { code, stderr } = cli(['convert', fixturePath('hello.yaml'), '--adopt', '--to', 'v2']);
    assert.equal(code, 2);
    assert.match(stderr, /--adopt .* does not apply to --to v2/);
  });

  it('still converts an invalid manifest but says why it is invalid, and exits 1', () => {
    const { code, stdout, stderr } = cli(['convert', fixturePath('invalid-dangling-link.yaml')]);
    assert.equal(code, 1);
    assert.match(stdout, /kind: WasmCloudApplication/);
    assert.match(stderr, /link target "httpclient" is not a component/);
  });
});

describe('status', () => {
  let scenario: Scenario;
  before(async () => (scenario = await startScenario()));
  after(() => scenario.stop());

  it('prints the status the hook writes, asked of wadm over NATS', async () => {
    const mc = scenario.metacontroller();
    mc.apply(wasmApp().build() as never);
    const { object } = await mc.waitFor('default', 'hello-world', (obj) => condition(obj!, 'Ready')?.status === 'True', WADM_WAIT);
    const { code, stdout, stderr } = await cliAsync(['status', 'hello-world', '--lattice', 'default'], { NATS_URL: scenario.nats.url });
    assert.equal(code, 0, stderr);
    const printed = yaml.load(stdout) as { owner: string; versions: string[]; status: Record<string, unknown> };
    const written = object!.status as Record<string, unknown>;
    assert.equal(printed.owner, 'default/hello-world');
    assert.deepEqual(printed.versions, [written['version']]);
    for (const key of ['lattice', 'version', 'deployedVersion', 'phase', 'message', 'scalers'])
      assert.deepEqual(printed.status[key], written[key], key);
  });

  it('says so when wadm has no such application, or cannot be reached', async () => {
    const missing = await cliAsync(['status', 'nope', '-l', 'default'], { NATS_URL: scenario.nats.url });
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, 'wadm has no application "nope" in lattice "default"\n');
    const down = cli(['status', 'x'], { NATS_URL: 'nats://127.0.0.1:1' });
    assert.equal(down.code, 2);
    assert.match(down.stderr, /cannot connect to NATS at nats:\/\/127\.0\.0\.1:1/);
  });
});

describe('the command line', () => {
  it('prints its usage with --help and refuses unknown commands with exit 2', () => {
    assert.match(cli(['--help']).stdout, /usage: wasmcloud-metacontroller/);
    const unknown = cli(['deploy']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command "deploy"/);
  });
});
