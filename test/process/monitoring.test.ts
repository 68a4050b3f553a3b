import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import yaml from 'js-yaml';
import { Metrics } from '../../src/plumbing/metrics.js';

const rendered = spawnSync(
  process.env['KUBECTL_BIN'] || 'kubectl',
  ['kustomize', resolve(import.meta.dirname, '../../manifests/monitoring')],
  { encoding: 'utf8' },
);
type Obj = Record<string, any>; // rendered Kubernetes objects
const objects = () => {
  assert.equal(rendered.status, 0, `kubectl kustomize manifests/monitoring failed: ${rendered.error?.message ?? rendered.stderr}`);
  return yaml.loadAll(rendered.stdout) as Obj[];
};

/** Every series name the service exposes (histograms add _bucket, _count and _sum). */
async function exposed(): Promise<Set<string>> {
  const metrics = new Metrics({ defaultMetrics: true });
  metrics.observeCaches({ knowledge: { size: 0, evictions: 0 }, answers: { size: 0, evictions: 0 } }, () => 0);
  metrics.observeWatch(() => 0);
  const families = await metrics.registry.getMetricsAsJSON();
  return new Set(
    families.flatMap((f) => (String(f.type) === 'histogram' ? ['_bucket', '_count', '_sum'].map((s) => f.name + s) : [f.name])),
  );
}

function referenced(expr: string): string[] {
  return expr.match(/wasmcloud_metacontroller_[a-z_]+/g) ?? [];
}

describe('manifests/monitoring', () => {
  it('renders a PodMonitor, a PrometheusRule and a dashboard ConfigMap that Grafana picks up', () => {
    assert.deepEqual(
      objects()
        .map((o) => o['kind'])
        .sort(),
      ['ConfigMap', 'PodMonitor', 'PrometheusRule'],
    );
    const dashboard = objects().find((o) => o['kind'] === 'ConfigMap')!;
    assert.equal(dashboard['metadata'].labels.grafana_dashboard, '1');
  });

  it('alerts on failing applications, an unavailable lattice, drift fights, hook errors, refused NATS subjects and bugs, using only metrics the service exposes', async () => {
    const names = await exposed();
    const rule = objects().find((o) => o['kind'] === 'PrometheusRule')!;
    const rules = rule['spec'].groups.flatMap((g: Obj) => g['rules']) as Obj[];
    assert.deepEqual(
      rules.map((r) => r['alert']),
      [
        'WasmCloudApplicationsFailing',
        'WasmCloudLatticeUnavailable',
        'WasmCloudApplicationsDrifting',
        'WasmCloudMetacontrollerHookErrors',
        'WasmCloudNatsPermissionDenied',
        'WasmCloudMetacontrollerBug',
      ],
    );
    for (const r of rules) {
      assert.ok(referenced(r['expr']).length > 0, r['alert']);
      for (const name of referenced(r['expr'])) assert.ok(names.has(name), `${r['alert']} uses ${name}, which the service does not expose`);
    }
  });

  it('has a dashboard whose every query uses metrics the service exposes', async () => {
    const names = await exposed();
    const dashboard = JSON.parse(objects().find((o) => o['kind'] === 'ConfigMap')!['data']['wasmcloud-metacontroller.json']) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };
    assert.ok(dashboard.panels.length >= 8);
    for (const panel of dashboard.panels) {
      for (const target of panel.targets) {
        for (const name of referenced(target.expr))
          assert.ok(names.has(name), `panel "${panel.title}" uses ${name}, which the service does not expose`);
      }
    }
  });
});
