// Renders charts/wasmcloud-metacontroller with the pinned helm (scripts/test-deps.sh) and reads the
// objects as Kubernetes would; also renders kustomize directories the same way, for comparisons.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import yaml from 'js-yaml';

const ROOT = resolve(import.meta.dirname, '../..');
export const CHART = resolve(ROOT, 'charts/wasmcloud-metacontroller');
export const ALL_OPTIONS = resolve(ROOT, 'test/fixtures/helm/all-options.yaml');
export const NAMESPACE = 'wasmcloud-metacontroller';
export type Obj = Record<string, any>; // rendered Kubernetes objects: read by path, compared by value

function run(bin: string, args: string[]): string {
  const result = spawnSync(bin, args, { encoding: 'utf8', cwd: ROOT });
  if (result.error) throw new Error(`cannot run ${bin} (${result.error.message}): run \`bash scripts/test-deps.sh\``);
  if (result.status !== 0) throw new Error(`${bin} ${args.join(' ')} failed:\n${result.stdout}${result.stderr}`);
  return result.stdout;
}
export const helm = (...args: string[]) => run(process.env['HELM_BIN'] || 'helm', args);
const kubectl = (...args: string[]) => run(process.env['KUBECTL_BIN'] || 'kubectl', args);

/** Objects read as Kubernetes reads them: through kubectl's YAML parser (YAML 1.1, so a mode
 *  written 0440 is the octal it means), which js-yaml alone would read differently. */
function throughKubectl(manifest: string): Obj[] {
  const dir = mkdtempSync(join(tmpdir(), 'helm-render-'));
  try {
    writeFileSync(join(dir, 'objects.yaml'), manifest);
    writeFileSync(join(dir, 'kustomization.yaml'), 'resources:\n  - objects.yaml\n');
    return (yaml.loadAll(kubectl('kustomize', dir)) as Obj[]).filter(Boolean);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// A helm built with `go install` lacks the release build's Kubernetes version and assumes 1.20,
// which the chart's kubeVersion refuses: render for the Kubernetes the other tests run.
const KUBERNETES_VERSION = /^KUBERNETES_VERSION=(\S+)$/m.exec(readFileSync(resolve(ROOT, 'scripts/test-deps.sh'), 'utf8'))![1]!;

/** `helm template` of the chart (its CRD is a template) in NAMESPACE, with extra helm arguments. */
export const renderChart = (...args: string[]): Obj[] =>
  throughKubectl(
    helm('template', 'wasmcloud-metacontroller', CHART, '--namespace', NAMESPACE, '--kube-version', KUBERNETES_VERSION, ...args),
  );

/** `kubectl kustomize DIR`, DIR relative to the repository. */
export const kustomize = (dir: string): Obj[] => (yaml.loadAll(kubectl('kustomize', resolve(ROOT, dir))) as Obj[]).filter(Boolean);
