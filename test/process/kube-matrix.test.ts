// The Kubernetes compatibility matrix (scripts/kube-matrix.sh) and the floor everything states: the
// matrix tests the chart's kubeVersion minimum and the newest release beside the pinned one, every
// file of the kube tier, what CI caches; the README's table and docs/resource.md name exactly the
// versions tested.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import yaml from 'js-yaml';
import { assertRunByCi, assertUsage, bashArray, inVersionOrder, read, readmeVersionRows, releaseLine } from '../support/matrix-script.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SCRIPT = 'scripts/kube-matrix.sh';
const MATRIX_VERSIONS = bashArray(SCRIPT, 'MATRIX_VERSIONS');
const KUBE_FILES = bashArray(SCRIPT, 'KUBE_FILES');
const PINNED = /^KUBERNETES_VERSION=(\S+)$/m.exec(read('scripts/test-deps.sh'))![1]!;
const TESTED = inVersionOrder([...MATRIX_VERSIONS, PINNED]);
/** Chart.yaml's kubeVersion minimum, as v1.MINOR. */
const FLOOR = `v${/^kubeVersion: ">=(\d+\.\d+)\.0-0"$/m.exec(read('charts/wasmcloud-metacontroller/Chart.yaml'))![1]!}`;

describe('scripts/kube-matrix.sh', () => {
  it("tests the chart's floor and the newest release line beside the pinned one, the newest patch of each once", () => {
    for (const version of MATRIX_VERSIONS) assert.match(version, /^v1\.\d+\.\d+$/);
    const lines = TESTED.map(releaseLine);
    assert.equal(new Set(lines).size, lines.length, `one version per release line: ${lines.join(', ')}`);
    assert.equal(lines[0], FLOOR, "the oldest version tested is Chart.yaml's kubeVersion minimum");
    assert.notEqual(releaseLine(PINNED), lines.at(-1), 'a release newer than the pinned one is tested');
  });

  it('runs every file of the kube tier (test/kube/), each once', () => {
    const tier = readdirSync(resolve(ROOT, 'test/kube'))
      .filter((file) => file.endsWith('.test.ts'))
      .map((file) => `test/kube/${file}`);
    assert.deepEqual([...KUBE_FILES].sort(), tier.sort());
  });

  it('prints its usage, and refuses an unknown argument', () => assertUsage(SCRIPT));

  it('is what `npm run test:kube-matrix` runs, and CI runs it after npm test', () => assertRunByCi('test:kube-matrix', SCRIPT));

  it("runs in ci.yml's job of its own, whose cache is keyed on it and on the build script", () => {
    type Step = { uses?: string; run?: string; with?: Record<string, string> };
    const ci = yaml.load(read('.github/workflows/ci.yml')) as { jobs: Record<string, { 'timeout-minutes': number; steps: Step[] }> };
    const job = ci.jobs['kubernetes']!;
    assert.equal(job['timeout-minutes'], 90);
    assert.ok(job.steps.some((step) => step.run?.includes('npm run test:kube-matrix')));
    const cache = job.steps.find((step) => step.uses?.startsWith('actions/cache@') && step.with?.['path']?.includes('.cache/bin'));
    for (const input of [SCRIPT, 'scripts/build-kubernetes.sh', 'scripts/test-deps.sh'])
      assert.ok(cache!.with!['key']!.includes(`'${input}'`), input);
    // Its first run starts from the test jobs' builds (the pinned release, helm, wadm).
    assert.match(cache!.with!['restore-keys']!, /^test-deps-\$\{\{ runner\.os \}\}-$/m);
    // The other jobs leave it out: .ci/run stops before it under their CI_SCOPE.
    const ciRun = read('.ci/run').split('\n');
    assert.ok(
      ciRun.indexOf('if [[ "${CI_SCOPE:-all}" == newest ]]; then exit 0; fi') <
        ciRun.findIndex((l) => l.startsWith('npm run test:kube-matrix')),
    );
  });
});

describe("README.md's Kubernetes compatibility table", () => {
  const rows = readmeVersionRows('Kubernetes compatibility');

  it('names exactly the versions tested: the matrix and the pinned one, in order', () => {
    assert.deepEqual(
      rows.map((row) => row[0]!),
      TESTED,
    );
  });

  it('gives each matrix version its result on every file of the tier', () => {
    for (const row of rows.filter((cells) => MATRIX_VERSIONS.includes(cells[0]!)))
      assert.ok(
        row.some((cell) => cell.includes(`/${KUBE_FILES.length} files`)),
        `${row[0]}: no "N/${KUBE_FILES.length} files" cell in | ${row.join(' | ')} |`,
      );
  });
});

describe('docs/resource.md', () => {
  it('says the CRD rules are tested against the API servers of the versions tested', () => {
    const minors = TESTED.map((version) => releaseLine(version).slice(1));
    const named = `${minors.slice(0, -1).join(', ')} and ${minors.at(-1)}`;
    assert.ok(read('docs/resource.md').replace(/\s+/g, ' ').includes(`tested against kube-apiserver ${named}`), named);
  });
});
