// What an operator sees: /metrics after a scenario, and the log lines it wrote.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { condition } from '../support/metacontroller.js';
import { wasmApp } from '../support/resources.js';
import { startScenario, WADM_WAIT, type Scenario } from '../support/scenario.js';
import type { RunningService } from '../support/service.js';

let scenario: Scenario;
let running: RunningService;

before(async () => {
  scenario = await startScenario({ LOG_LEVEL: 'info' });
  ({ running } = scenario);
});
after(() => scenario.stop());

async function scrape(): Promise<Map<string, number>> {
  const text = await (await fetch(`${running.url}/metrics`)).text();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

const m = (name: string) => `wasmcloud_metacontroller_${name}`;
const ready = (obj: unknown) => condition(obj as never, 'Ready')?.status === 'True';

describe("an operator's view of a deploy, an edit, settled resyncs, a bad spec and a delete", () => {
  let metrics: Map<string, number>;
  let whileDeployed: Map<string, number>;
  let infoLinesDuringResyncs: Record<string, unknown>[] = [];

  before(async () => {
    const live = scenario.metacontroller();
    live.apply(wasmApp().build() as never);
    await live.waitFor('default', 'hello-world', ready, WADM_WAIT);
    live.apply(wasmApp().described('edited').build() as never);
    await live.waitFor(
      'default',
      'hello-world',
      (o) =>
        ready(o) &&
        (o!.status as { version: string }).version !== undefined &&
        live.get('default', 'hello-world')!.metadata.generation === 2,
      WADM_WAIT,
    );
    await live.reconcileUntilStable('default', 'hello-world', { maxPasses: 3 });
    const settledAt = running.logs.length;
    for (let i = 0; i < 5; i++) await live.reconcile('default', 'hello-world');
    infoLinesDuringResyncs = running.logs.slice(settledAt).filter((l) => Number(l['level']) >= 30);
    const bad = wasmApp().with({ components: [] }).named('broken').build();
    live.apply(bad as never);
    await live.reconcileUntilStable('default', 'broken', { maxPasses: 3 });
    whileDeployed = await scrape();
    await live.deleteAndFinalize('default', 'hello-world', { maxPasses: 5 });
    metrics = await scrape();
  });

  it('counts hook calls by hook and code, with a latency histogram', () => {
    assert.ok(metrics.get(`${m('hook_requests_total')}{hook="sync",code="200"}`)! >= 8);
    assert.ok(metrics.get(`${m('hook_requests_total')}{hook="finalize",code="200"}`)! >= 1);
    assert.ok(metrics.get(`${m('hook_duration_seconds_count')}{hook="sync"}`)! >= 8);
  });

  it('counts wadm requests by operation and outcome, with their latency', () => {
    assert.ok(metrics.get(`${m('wadm_requests_total')}{operation="put",outcome="ok"}`)! >= 2);
    assert.ok(metrics.get(`${m('wadm_requests_total')}{operation="versions",outcome="ok"}`)! >= 1);
    assert.ok(metrics.get(`${m('wadm_request_duration_seconds_count')}{operation="deploy"}`)! >= 2);
  });

  it('counts what it changed in wadm', () => {
    assert.equal(metrics.get(`${m('wadm_writes_total')}{operation="put"}`), 2);
    assert.equal(metrics.get(`${m('wadm_writes_total')}{operation="deploy"}`), 2);
    assert.equal(metrics.get(`${m('wadm_writes_total')}{operation="delete"}`), 1);
  });

  it('shows applications by phase per lattice, and forgets a deleted one', () => {
    assert.equal(whileDeployed.get(`${m('applications')}{lattice="default",phase="Deployed"}`), 1);
    assert.equal(whileDeployed.get(`${m('applications')}{lattice="default",phase="Invalid"}`), 1);
    assert.equal(metrics.get(`${m('applications')}{lattice="default",phase="Deployed"}`), undefined);
  });

  it('shows the NATS connection, the caches, and settled answers served from memory', () => {
    assert.equal(metrics.get(m('nats_connected')), 1);
    assert.ok(metrics.get(`${m('cache_entries')}{cache="knowledge"}`)! >= 1);
    assert.ok(metrics.get(`${m('cache_entries')}{cache="answers"}`)! >= 1);
    assert.ok(metrics.get(`${m('cache_entries')}{cache="lattices"}`)! >= 1);
    assert.equal(metrics.get(`${m('cache_evictions_total')}{cache="knowledge"}`), 0);
    assert.ok(metrics.get(`${m('hook_answers_total')}{source="memory"}`)! >= 5);
  });

  it('logs each change at info with the application, lattice, version and request id, and no-op resyncs not at all', () => {
    const puts = running.logs.filter((l) => typeof l['msg'] === 'string' && (l['msg'] as string).startsWith('put version '));
    assert.equal(puts.length, 2);
    for (const line of puts) {
      assert.equal(line['namespace'], 'default');
      assert.equal(line['name'], 'hello-world');
      assert.equal(line['lattice'], 'default');
      assert.equal(line['msg'], `put version ${String(line['version'])}`);
      assert.equal(typeof line['reqId'], 'string');
    }
    assert.deepEqual(infoLinesDuringResyncs, [], 'settled resyncs log nothing at info');
    assert.ok(running.logs.some((l) => l['msg'] === 'deleted the application and all its versions' && l['name'] === 'hello-world'));
  });
});
