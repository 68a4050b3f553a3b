// The applications gauge with two replicas: a phase lives on the replica that last answered for
// the application and expires there (docs/operations.md: Per-replica metrics). Two services
// in-process over one real NATS and wadm, replica A on a test clock.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PHASE_TTL_MS } from '../../src/plumbing/metrics.js';
import { testClock } from '../support/clock.js';
import { condition, metacontrollerFor } from '../support/metacontroller.js';
import { wasmApp } from '../support/resources.js';
import { startScenario, WADM_WAIT, type Scenario } from '../support/scenario.js';
import { CleanupStack, startService, type RunningService } from '../support/service.js';

const clock = testClock();
let scenario: Scenario;
let replicaB: RunningService;
const cleanups = new CleanupStack();

before(async () => {
  scenario = await startScenario({}, { now: clock.now });
  replicaB = await startService(cleanups, { NATS_URL: scenario.nats.url });
  await replicaB.connected();
});
after(async () => {
  await cleanups.run();
  await scenario.stop();
});

async function counted(running: RunningService, phase: string): Promise<number> {
  const { values } = await running.service.metrics.applications.get();
  return values.filter((v) => v.labels['phase'] === phase).reduce((sum, v) => sum + v.value, 0);
}

describe('the applications gauge of two replicas', () => {
  it('forgets, within PHASE_TTL_MS, an application that the other replica finalized', async () => {
    const onA = metacontrollerFor(scenario.running.url);
    onA.apply(wasmApp().build() as never);
    await onA.waitFor('default', 'hello-world', (obj) => condition(obj, 'Ready')?.status === 'True', WADM_WAIT);
    assert.equal(await counted(scenario.running, 'Deployed'), 1);

    // Replica B answers everything from now on, the finalize among them.
    const onB = metacontrollerFor(replicaB.url, { api: onA.api });
    await onB.deleteAndFinalize('default', 'hello-world');
    assert.equal(onB.get('default', 'hello-world'), undefined);
    assert.equal(await counted(replicaB, 'Deployed'), 0, 'B finalized it: B does not count it');

    clock.advance(PHASE_TTL_MS - 1);
    assert.equal(await counted(scenario.running, 'Deployed'), 1, 'A still counts what it answered lately');
    clock.advance(1);
    assert.equal(await counted(scenario.running, 'Deployed'), 0, 'A no longer counts it once its answer is PHASE_TTL_MS old');
  });

  it('keeps counting an application it keeps answering from memory', async () => {
    const mc = metacontrollerFor(scenario.running.url);
    mc.apply(wasmApp().named('kept').build() as never);
    await mc.waitFor('default', 'kept', (obj) => condition(obj, 'Ready')?.status === 'True', WADM_WAIT);
    await mc.reconcileUntilStable('default', 'kept', { maxPasses: 3 });
    for (let i = 0; i < 3; i++) {
      clock.advance(PHASE_TTL_MS / 2);
      await mc.reconcile('default', 'kept');
    }
    assert.equal(await counted(scenario.running, 'Deployed'), 1, 'answers reused from memory confirm the phase');
  });
});
