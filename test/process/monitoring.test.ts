import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import yaml from 'js-yaml';
import { Metrics } from '../../src/plumbing/metrics.js';
import { exposedSeries } from '../support/metric-names.js';

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

  it('alerts on failing applications, a missing service, an unavailable lattice, drift fights, hook errors, refused NATS subjects, a slow wadm and bugs, using only metrics the service exposes', async () => {
    const names = await exposedSeries();
    const rule = objects().find((o) => o['kind'] === 'PrometheusRule')!;
    const rules = rule['spec'].groups.flatMap((g: Obj) => g['rules']) as Obj[];
    assert.deepEqual(
      rules.map((r) => r['alert']),
      [
        'WasmCloudApplicationsFailing',
        'WasmCloudMetacontrollerDown',
        'WasmCloudLatticeUnavailable',
        'WasmCloudApplicationsDrifting',
        'WasmCloudMetacontrollerHookErrors',
        'WasmCloudNatsPermissionDenied',
        'WasmCloudWadmSlow',
        'WasmCloudMetacontrollerBug',
      ],
    );
    for (const r of rules) {
      assert.ok(referenced(r['expr']).length > 0, r['alert']);
      for (const name of referenced(r['expr'])) assert.ok(names.has(name), `${r['alert']} uses ${name}, which the service does not expose`);
    }
  });

  it('alerts when no replica is scraped, on a series every replica exposes from its start', async () => {
    const rule = objects().find((o) => o['kind'] === 'PrometheusRule')!;
    const down = (rule['spec'].groups.flatMap((g: Obj) => g['rules']) as Obj[]).find((r) => r['alert'] === 'WasmCloudMetacontrollerDown')!;
    // absent() of a bare series: empty (quiet) while any replica is scraped, 1 (firing) when none is.
    const series = /^absent\((wasmcloud_metacontroller_[a-z_]+)\)$/.exec(down['expr'].trim())?.[1];
    assert.ok(series, `not absent() of one bare series: ${down['expr']}`);
    // A replica that has answered nothing yet (no hook call, no NATS) already exposes it.
    const fresh = await new Metrics().registry.getMetricsAsJSON();
    const samples = fresh.find((f) => f.name === series)?.values ?? [];
    assert.deepEqual(
      samples.map((s) => s.value),
      [1],
      `${series} is not one sample of 1 on a fresh replica`,
    );
    assert.equal(down['labels'].severity, 'critical');
    assert.match(down['for'], /^\d+m$/);
  });

  it('has a dashboard whose every query uses metrics the service exposes', async () => {
    const names = await exposedSeries();
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
