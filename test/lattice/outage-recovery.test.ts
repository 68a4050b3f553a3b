// NATS stopped for two minutes under Metacontroller v4.17's workqueue, against the whole service, the
// real nats-server and the real wadm: how long after NATS is back is every application Ready=True
// again, and does any answer on the way start Metacontroller's backoff?
//
// How time is modelled. One test clock is the service's clock (its NATS grace, its status times
// and resync steps) and the emulator's: Metacontroller's workqueue (support/metacontroller/workqueue.ts)
// moves it to the next pass due once no pass runs, and a pass takes no time on it. NATS is really
// stopped while the clock runs through the two minutes, and really started again while the clock is
// held at the moment NATS returns. The clock moves on only once the lattice answers again (the
// service connected, wadm and the host back, wadm's status `deployed` for every application): the
// recovery measured is what Metacontroller's queue and the service's answers add, counted on the
// clock, whatever the machine's load. The CompositeController's periodic resync is modelled at
// 600 s with one tick 1 s into the outage: every parent is called during the grace, and none
// again by that resync before the bound, so the bound holds by the service's own answers
// (Retry-After, resyncAfterSeconds). The shipped 60 s resync would bound it by itself.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { testClock } from '../support/clock.js';
import { condition, metacontrollerFor } from '../support/metacontroller.js';
import { MetacontrollerQueue } from '../support/metacontroller/workqueue.js';
import { wasmApp } from '../support/resources.js';
import { startScenario, WADM_WAIT, type Scenario } from '../support/scenario.js';
import { until } from '../support/wait.js';

const OUTAGE_MS = 120_000;
const RECOVERY_BOUND_MS = 60_000;
const NAMES = ['app-0', 'app-1', 'app-2', 'app-3', 'app-4'];

const clock = testClock();
let scenario: Scenario;
before(async () => {
  scenario = await startScenario({}, { now: clock.now });
});
after(() => scenario.stop());

const ready = (name: string, mc: ReturnType<typeof metacontrollerFor>) => condition(mc.get('default', name), 'Ready');

it('every application is Ready=True within 60 s of NATS returning from a 2-minute outage, and no answer starts a backoff', async (t) => {
  const { nats, wadm, running } = scenario;
  const mc = metacontrollerFor(running.url, { etag: true, now: clock.now });
  for (const name of NAMES) mc.apply(wasmApp().named(name).build() as never);
  for (const name of NAMES) await mc.waitFor('default', name, () => ready(name, mc)?.status === 'True', WADM_WAIT);

  const down = clock.now();
  const queue = new MetacontrollerQueue(mc, clock, { resyncPeriodMs: 600_000, firstResyncAt: down + 1_000 });
  for (const name of NAMES) queue.track('default', name);
  await nats.stop();
  await until(() => !running.service.link.isConnected(), { what: 'the service sees NATS gone' });

  const back = down + OUTAGE_MS;
  await queue.run(() => false, back);
  for (const name of NAMES) {
    assert.deepEqual([ready(name, mc)?.status, ready(name, mc)?.reason], ['Unknown', 'LatticeUnavailable'], `${name} shows the outage`);
  }
  const refused = queue.passes.filter((p) => p.result.httpStatus === 429);
  const outageVisibleAt = Math.max(
    ...NAMES.map((name) => queue.passes.find((p) => p.key === `default/${name}` && p.result.statusChanged)!.at),
  );

  await scenario.restartNats();
  await running.connected(30_000);
  for (const name of NAMES) {
    await until(
      async () => ((await wadm.direct('default', `status.${name}`)).status as { status?: { type?: string } })?.status?.type === 'deployed',
      {
        ...WADM_WAIT,
        what: `wadm reports ${name} deployed again`,
      },
    );
  }

  const recovered = await queue.run(() => NAMES.every((name) => ready(name, mc)?.status === 'True'), back + 10 * 60_000);
  const recoveryMs = clock.now() - back;
  const backoffs = queue.passes.filter((p) => p.rateLimitedMs !== undefined);
  t.diagnostic(
    `outage in every status ${(outageVisibleAt - down) / 1000} s after NATS stopped; ${refused.length} calls refused 429; ` +
      `Ready=True again ${recoveryMs / 1000} s after NATS returned; ${queue.passes.length} passes, ${backoffs.length} rate-limited`,
  );
  assert.ok(recovered, `not all Ready=True within 10 minutes of NATS returning: ${NAMES.map((n) => ready(n, mc)?.reason).join(', ')}`);
  assert.ok(recoveryMs <= RECOVERY_BOUND_MS, `Ready=True again ${recoveryMs} ms after NATS returned`);
  assert.deepEqual(
    backoffs.map((p) => `${p.key} at ${p.at - down} ms: ${p.result.error}`),
    [],
    'no answer started the exponential backoff',
  );
  assert.ok(refused.length > 0 && refused.every((p) => p.result.retryAfterSeconds === 1), 'the grace refused calls with Retry-After: 1');
});
