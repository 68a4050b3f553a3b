// The hook-duration histogram is ours (src/plumbing/histogram.ts), for speed; Prometheus and
// dashboards must not be able to tell it from prom-client's.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Histogram, Registry } from 'prom-client';
import { LightHistogram } from '../../src/plumbing/histogram.js';

const BOUNDS = [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10];
// On bounds, between them, below the first and past the last; two label values.
const OBSERVATIONS: [string, number][] = [
  ['sync', 0.0001],
  ['sync', 0.0005],
  ['sync', 0.0007],
  ['finalize', 0.02],
  ['sync', 0.3],
  ['sync', 12],
  ['finalize', 10],
  ['sync', 0.001],
];

function both() {
  const [theirs, ours] = [new Registry(), new Registry()];
  const reference = new Histogram({ name: 'x_seconds', help: 'Some help.', labelNames: ['hook'], buckets: BOUNDS, registers: [theirs] });
  const light = new LightHistogram('x_seconds', 'Some help.', 'hook', BOUNDS, ours);
  for (const [hook, value] of OBSERVATIONS) {
    reference.observe({ hook }, value);
    light.observe(hook, value);
  }
  return { theirs, ours };
}

describe('LightHistogram', () => {
  it('prints the same exposition as prom-client for the same observations', async () => {
    const { theirs, ours } = both();
    const text = await ours.metrics();
    assert.equal(text, await theirs.metrics());
    assert.match(text, /^x_seconds_bucket\{le="0.001",hook="sync"\} 4$/m);
    assert.match(text, /^x_seconds_count\{hook="finalize"\} 2$/m);
  });

  it('gives the same JSON as prom-client, and is emptied by a registry reset', async () => {
    const { theirs, ours } = both();
    const strip = (metrics: object[]) => JSON.parse(JSON.stringify(metrics, (k, v) => (k === 'exemplar' ? undefined : v)));
    assert.deepEqual(strip(await ours.getMetricsAsJSON()), strip(await theirs.getMetricsAsJSON()));
    ours.resetMetrics();
    assert.equal(await ours.metrics(), '# HELP x_seconds Some help.\n# TYPE x_seconds histogram\n');
  });
});
