// The GitHub Actions workflows cannot run here; what can be checked is checked: actionlint (the
// pinned one from scripts/test-deps.sh) finds no error, and everything they name exists — the
// scripts, paths, the chart, the Dockerfile's build arguments and stages, the image name.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import yaml from 'js-yaml';

const ROOT = resolve(import.meta.dirname, '../..');
const WORKFLOWS = resolve(ROOT, '.github/workflows');
const read = (path: string) => readFileSync(resolve(ROOT, path), 'utf8');
type Obj = Record<string, any>; // parsed workflow YAML, read by path
type Step = { uses?: string; run?: string; with?: Obj; id?: string; env?: Obj };

const workflow = (name: string) => yaml.load(read(`.github/workflows/${name}`)) as Obj;
const steps = (w: Obj): Step[] => Object.values(w['jobs'] as Obj).flatMap((job: Obj) => job['steps'] as Step[]);
const runs = (w: Obj) =>
  steps(w)
    .map((s) => s.run ?? '')
    .join('\n');
const step = (w: Obj, action: string) => steps(w).find((s) => s.uses?.startsWith(`${action}@`));
const VERSION = (JSON.parse(read('package.json')) as { version: string }).version;

describe('.github/workflows', () => {
  it('pass actionlint', () => {
    const files = readdirSync(WORKFLOWS)
      .filter((f) => f.endsWith('.yml'))
      .sort();
    assert.deepEqual(files, ['ci.yml', 'release.yml']);
    const bin = process.env['ACTIONLINT_BIN'] || 'actionlint';
    const run = spawnSync(bin, ['-color=false', ...files.map((f) => resolve(WORKFLOWS, f))], { cwd: ROOT, encoding: 'utf8' });
    assert.ok(!run.error, `cannot run ${bin} (${run.error?.message}): run \`bash scripts/test-deps.sh\``);
    assert.equal(run.status, 0, run.stdout + run.stderr);
  });

  it('pin every action to a major version or more', () => {
    for (const name of ['ci.yml', 'release.yml']) {
      for (const s of steps(workflow(name)).filter((s) => s.uses))
        assert.match(s.uses!, /^[\w.-]+\/[\w.-]+@v\d+(\.\d+){0,2}$/, `${name}: ${s.uses}`);
    }
  });

  it('ci.yml runs .ci/run on pushes and pull requests, within its 90 minutes', () => {
    const ci = workflow('ci.yml');
    assert.deepEqual(Object.keys(ci['on']).sort(), ['pull_request', 'push']);
    assert.match(runs(ci), /^bash \.ci\/run$/m);
    assert.ok(existsSync(resolve(ROOT, '.ci/run')));
    assert.equal(ci['jobs'].test['timeout-minutes'], 90);
    // The cache holds what scripts/test-deps.sh builds, where it puts it.
    const cached = String(step(ci, 'actions/cache')!.with!['path']).trim().split('\n');
    assert.deepEqual(cached, ['.cache/bin', 'test/wadm/target']);
    const testDeps = read('scripts/test-deps.sh');
    assert.match(testDeps, /^BIN_DIR=\$CACHE_DIR\/bin$/m);
    assert.match(testDeps, /^WADM_TARGET_DIR=\$WADM_DIR\/target$/m);
    // The upgrade tests build the previous release from its commit: the checkout has the whole history.
    assert.equal(step(ci, 'actions/checkout')!.with!['fetch-depth'], 0);
  });

  it("ci.yml tests the supported Node.js lines: the ones pinned in scripts/node-lines.env, the image's among them", () => {
    const pins = read('scripts/node-lines.env');
    const lines = /^NODE_LINES="([\d ]+)"$/m.exec(pins)![1]!.split(' ');
    assert.deepEqual(workflow('ci.yml')['jobs'].test.strategy.matrix.node, lines);
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    assert.equal(engines, lines.map((line) => `^${line}`).join(' || '), "package.json's engines names each supported line");
    assert.equal((JSON.parse(read('package-lock.json')) as Obj)['packages'][''].engines.node, engines);
    // The oldest line is the floor of what the code may use: the bundle's syntax and the API types.
    assert.match(read('scripts/build.mjs'), new RegExp(`^  target: 'node${lines[0]}',$`, 'm'));
    const types = (JSON.parse(read('package.json')) as { devDependencies: Record<string, string> }).devDependencies['@types/node'];
    assert.match(types!, new RegExp(`^\\^${lines[0]}\\.`), `@types/node ${types} is not of Node ${lines[0]}`);
    for (const line of lines)
      assert.match(pins, new RegExp(`^NODE_${line}_VERSION=${line}\\.\\d+\\.\\d+\nNODE_${line}_INTEGRITY=sha512-\\S+$`, 'm'));
    const image = /^ARG NODE_IMAGE=node:(\d+)\.(\d+)/m.exec(read('Dockerfile'))!;
    assert.match(pins, new RegExp(`^NODE_${image[1]}_VERSION=${image[1]}\\.${image[2]}\\.`, 'm'), "the image's release is the one tested");
    assert.match(read('.ci/run'), /^npm run test:node-lines\b/m);
    // The tiers that pin their own Node run once per push: in the newest line's job.
    const ciRun = steps(workflow('ci.yml')).find((s) => s.run === 'bash .ci/run');
    const scope = String(ciRun?.env?.['CI_SCOPE']);
    assert.equal(scope, `\${{ matrix.node == '${lines.at(-1)}' && 'newest' || 'line' }}`);
    // The Kubernetes matrix's job runs on the newest line too.
    const kube = (workflow('ci.yml')['jobs'].kubernetes.steps as Step[]).find((s) => s.uses?.startsWith('actions/setup-node@'));
    assert.equal(kube?.with?.['node-version'], lines.at(-1));
  });

  it('release.yml runs on v* tags and checks the tag against package.json', () => {
    const release = workflow('release.yml');
    assert.deepEqual(release['on'], { push: { tags: ['v*'] } });
    assert.match(runs(release), /jq -r \.version package\.json/);
    assert.match(runs(release), /"v\$\{version\}"/);
  });

  it('release.yml builds a two-platform image from the Dockerfile as an OCI layout and hands it to scripts/release.sh', () => {
    const release = workflow('release.yml');
    const build = steps(release).find((s) => s.run?.includes('docker buildx build'))!;
    assert.match(build.run!, /--platform linux\/amd64,linux\/arm64 --file Dockerfile/);
    assert.match(build.run!, /--output "type=oci,dest=\$\{RUNNER_TEMP\}\/image\.oci\.tar"/);
    assert.match(build.run!, /tar -xf "\$\{RUNNER_TEMP\}\/image\.oci\.tar" -C "\$\{RUNNER_TEMP\}\/image"/);
    assert.ok(step(release, 'docker/setup-buildx-action') && step(release, 'docker/setup-qemu-action'));
    const make = steps(release).find((s) => s.run?.includes('scripts/release.sh'))!;
    assert.equal(
      make.run!.trim(),
      'bash scripts/release.sh "$VERSION" --registry "$REGISTRY" --out release --image "${RUNNER_TEMP}/image"',
    );
    // The image it pushes is the one the manifests and the chart name.
    const image = `${release['env'].REGISTRY}/wasmcloud-metacontroller`;
    const kustomization = yaml.load(read('manifests/kustomization.yaml')) as Obj;
    assert.deepEqual(
      kustomization['images'].map((i: Obj) => i['name']),
      [image],
    );
    assert.equal((yaml.load(read('charts/wasmcloud-metacontroller/values.yaml')) as Obj)['image'].repository, image);
    assert.match(read('scripts/release.sh'), new RegExp(`^SOURCE_IMAGE=${image.replaceAll('.', '\\.')}$`, 'm'));
  });

  it('release.yml signs keyless (no --key), with the OIDC token the job may request, and verifies its own identity', () => {
    const release = workflow('release.yml');
    assert.doesNotMatch(runs(release), /--key/);
    assert.equal(release['jobs'].release.permissions['id-token'], 'write');
    const verify = steps(release).find((s) => s.run?.includes('scripts/release-verify.sh'))!;
    assert.match(
      verify.run!,
      /--certificate-identity-regexp "\^\$\{GITHUB_SERVER_URL\}\/\$\{GITHUB_REPOSITORY\}\/\\\.github\/workflows\/release\\\.yml@refs\/tags\/v"/,
    );
    assert.match(verify.run!, /--certificate-oidc-issuer https:\/\/token\.actions\.githubusercontent\.com/);
  });

  it('release.yml caches the release tools and publishes every file of the release, with notes from CHANGELOG.md', () => {
    const release = workflow('release.yml');
    const cache = step(release, 'actions/cache')!.with!;
    assert.equal(cache['path'], '.cache/bin');
    assert.match(cache['key'], /hashFiles\('scripts\/release-tools\.sh', 'scripts\/lib\/go-install\.sh'\)/);
    assert.match(
      runs(release),
      /gh release create "\$GITHUB_REF_NAME" --title "\$VERSION" --notes-file release\/release-notes\.md release\/\*/,
    );
    const notes = spawnSync('bash', [resolve(ROOT, 'scripts/release-notes.sh'), VERSION], { encoding: 'utf8' });
    assert.equal(notes.status, 0, notes.stderr);
  });

  it('name only scripts and files that exist', () => {
    for (const name of ['ci.yml', 'release.yml']) {
      for (const [, path] of runs(workflow(name)).matchAll(/bash ((?:\.ci|scripts)\/[\w.-]+)/g))
        assert.ok(existsSync(resolve(ROOT, path!)), `${name}: ${path}`);
    }
  });
});
