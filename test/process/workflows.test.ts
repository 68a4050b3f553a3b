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
    assert.equal(engines, `>=${lines[0]}`, 'package.json allows the oldest supported line and up');
    assert.equal((JSON.parse(read('package-lock.json')) as Obj)['packages'][''].engines.node, engines);
    for (const line of lines)
      assert.match(pins, new RegExp(`^NODE_${line}_VERSION=${line}\\.\\d+\\.\\d+\nNODE_${line}_INTEGRITY=sha512-\\S+$`, 'm'));
    const image = /^ARG NODE_IMAGE=node:(\d+)\.(\d+)/m.exec(read('Dockerfile'))!;
    assert.match(pins, new RegExp(`^NODE_${image[1]}_VERSION=${image[1]}\\.${image[2]}\\.`, 'm'), "the image's release is the one tested");
    assert.match(read('.ci/run'), /^npm run test:node-lines\b/m);
  });

  it('release.yml runs on v* tags and checks the tag against package.json', () => {
    const release = workflow('release.yml');
    assert.deepEqual(release['on'], { push: { tags: ['v*'] } });
    assert.match(runs(release), /jq -r \.version package\.json/);
    assert.match(runs(release), /"v\$\{version\}"/);
  });

  it('release.yml builds a multi-arch image with SBOM and provenance from the Dockerfile, with its arguments', () => {
    const release = workflow('release.yml');
    const build = step(release, 'docker/build-push-action')!.with!;
    assert.deepEqual(String(build['platforms']).split(','), ['linux/amd64', 'linux/arm64']);
    assert.equal(build['push'], true);
    assert.equal(build['sbom'], true);
    assert.equal(build['provenance'], 'mode=max');
    assert.ok(existsSync(resolve(ROOT, build['context'], build['file'])));
    const dockerfile = read(build['file']);
    const args = new Set([...dockerfile.matchAll(/^ARG (\w+)/gm)].map((m) => m[1]));
    const stages = new Set([...dockerfile.matchAll(/^FROM \S+ AS (\S+)/gim)].map((m) => m[1]));
    for (const line of String(build['build-args'] ?? '')
      .split('\n')
      .filter(Boolean))
      assert.ok(args.has(line.split('=')[0]), `no ARG for ${line}`);
    if (build['target'] !== undefined) assert.ok(stages.has(build['target']), `no stage ${build['target']}`);
    // The image it pushes is the one the manifests and the chart run.
    const image = release['env'].IMAGE as string;
    const kustomization = yaml.load(read('manifests/kustomization.yaml')) as Obj;
    assert.deepEqual(
      kustomization['images'].map((i: Obj) => i['name']),
      [image],
    );
    assert.equal((yaml.load(read('charts/wasmcloud-metacontroller/values.yaml')) as Obj)['image'].repository, image);
    assert.equal(build['tags'], '${{ env.IMAGE }}:${{ steps.version.outputs.version }}');
  });

  it('release.yml signs the pushed digest keyless, with the OIDC token the job may request', () => {
    const release = workflow('release.yml');
    assert.ok(step(release, 'sigstore/cosign-installer'));
    const sign = steps(release).find((s) => s.run?.includes('cosign sign'))!;
    assert.match(sign.run!, /cosign sign --yes "\$\{IMAGE\}@\$\{DIGEST\}"/);
    assert.equal(sign.env!['DIGEST'], '${{ steps.build.outputs.digest }}');
    assert.doesNotMatch(sign.run!, /--key/);
    assert.equal(release['jobs'].release.permissions['id-token'], 'write');
  });

  it('release.yml renders install.yaml from manifests/ with the image pinned by digest', () => {
    const render = steps(workflow('release.yml')).find((s) => s.run?.includes('install.yaml'))!;
    assert.match(render.run!, /^cd manifests$/m);
    assert.ok(existsSync(resolve(ROOT, 'manifests/kustomization.yaml')));
    assert.match(render.run!, /kustomize" edit set image "\$\{IMAGE\}=\$\{IMAGE\}:\$\{VERSION\}@\$\{DIGEST\}"/);
    assert.match(render.run!, /kustomize" build \. > \.\.\/install\.yaml/);
  });

  it('release.yml packages the chart of this repository at the package.json version, and publishes notes from CHANGELOG.md', () => {
    const release = workflow('release.yml');
    const text = runs(release);
    assert.match(text, /helm package charts\/wasmcloud-metacontroller --version "\$VERSION" --app-version "\$VERSION"/);
    assert.ok(existsSync(resolve(ROOT, 'charts/wasmcloud-metacontroller/Chart.yaml')));
    assert.equal(
      release['env'].HELM_VERSION,
      /^HELM_VERSION=(\S+)$/m.exec(read('scripts/test-deps.sh'))![1],
      'the release uses the helm the tests use',
    );
    assert.match(text, /bash scripts\/release-notes\.sh "\$\{\{ steps\.version\.outputs\.version \}\}" > release-notes\.md/);
    const notes = spawnSync('bash', [resolve(ROOT, 'scripts/release-notes.sh'), VERSION], { encoding: 'utf8' });
    assert.equal(notes.status, 0, notes.stderr);
    assert.match(text, /gh release create "\$GITHUB_REF_NAME" .*--notes-file release-notes\.md/);
    assert.match(text, /install\.yaml "wasmcloud-metacontroller-\$\{VERSION\}\.tgz"/);
  });

  it('name only scripts and files that exist', () => {
    for (const name of ['ci.yml', 'release.yml']) {
      for (const [, path] of runs(workflow(name)).matchAll(/bash ((?:\.ci|scripts)\/[\w.-]+)/g))
        assert.ok(existsSync(resolve(ROOT, path!)), `${name}: ${path}`);
    }
  });
});
