// A hook call ends within Metacontroller's timeout, end to end: 48 concurrent edits against a
// wadm that answers slowly (the relay holds every request 3 s, a third of the budget), so that calls wait for lattice
// slots and replies longer than HOOK_TIMEOUT allows. Counted: no call is abandoned by the
// emulator's timeout (HOOK_TIMEOUT, 10 s as compositecontroller.yaml says); in the end wadm has
// the newest desired version of every application deployed.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { condition, metacontrollerFor, type PassResult } from '../support/metacontroller.js';
import { wasmApp } from '../support/resources.js';
import { startScenario, WADM_WAIT, type Scenario } from '../support/scenario.js';
import { until } from '../support/wait.js';

const APPS = Array.from({ length: 48 }, (_, i) => `edit-${i}`);
/**
 * How long the relay holds each request: a third of the default budget, what docs/how-it-works.md
 * promises edits converge at. HOOK_BUDGET_WADM_MS measures another (the limit), and
 * HOOK_BUDGET_TIMEOUT_MS another WADM_TIMEOUT_MS than the default.
 */
const WADM_MS = Number(process.env['HOOK_BUDGET_WADM_MS'] ?? 3000);
const TIMEOUT = process.env['HOOK_BUDGET_TIMEOUT_MS'];
let scenario: Scenario;

before(async () => {
  // 48 calls of a few requests each against 32 request slots per lattice: many wait for one. The
  // service's default WADM_TIMEOUT_MS, as a user runs it.
  scenario = await startScenario(TIMEOUT === undefined ? {} : { WADM_TIMEOUT_MS: TIMEOUT });
});
after(() => scenario.stop());

describe('a hook call under a slow wadm', () => {
  it('ends within its budget, and the newest desired version is what wadm deploys', async (t) => {
    const mc = metacontrollerFor(scenario.running.url);
    for (const name of APPS) mc.apply(wasmApp().named(name).build() as never);
    await Promise.all(APPS.map((name) => mc.waitFor('default', name, (obj) => condition(obj, 'Ready')?.status === 'True', WADM_WAIT)));

    scenario.wadm.slow(WADM_MS);
    const sent = scenario.wadm.count();
    const started = performance.now();
    const results: PassResult[] = [];
    const edit = (n: number) => {
      for (const name of APPS)
        mc.apply(
          wasmApp()
            .named(name)
            .with({ description: `edit ${n}` })
            .build() as never,
        );
    };
    edit(1);
    const pass = () => Promise.all(APPS.map((name) => mc.reconcile('default', name).then((r) => void results.push(r))));
    await pass();
    edit(2); // a second edit while the first may still be on its way
    const desired = new Map<string, string>();
    let deployed: (string | null | undefined)[] = [];
    await until(
      async () => {
        await pass();
        for (const name of APPS) desired.set(name, (mc.get('default', name)!.status as { version: string }).version);
        deployed = await Promise.all(APPS.map(async (name) => (await scenario.wadm.model('default', name))?.deployed));
        return APPS.every(
          (name, i) => deployed[i] === desired.get(name) && condition(mc.get('default', name), 'Ready')?.status !== 'False',
        );
      },
      {
        what: () => {
          const i = Math.max(
            0,
            APPS.findIndex((n, j) => deployed[j] !== desired.get(n) || condition(mc.get('default', n), 'Ready')?.status === 'False'),
          );
          const name = APPS[i]!;
          return `every edit deployed; ${name}: ${JSON.stringify(mc.get('default', name)!.status)}, wadm deployed ${deployed[i]}, last: ${JSON.stringify(results.at(-1))}`;
        },
        timeoutMs: 240_000,
        intervalMs: 500,
      },
    );
    // What a measurement of the limit reads (HOOK_BUDGET_WADM_MS): how much it took to converge.
    t.diagnostic(
      `${WADM_MS} ms per request: converged after ${results.length} calls, ${scenario.wadm.count() - sent} wadm requests, ${Math.round((performance.now() - started) / 1000)} s`,
    );
    const abandoned = results.filter((r) => r.error?.includes('deadline exceeded'));
    assert.equal(abandoned.length, 0, `calls Metacontroller would have abandoned: ${abandoned.length} of ${results.length}`);
    assert.ok(results.length >= 2 * APPS.length, 'every application was called at least twice');
    const failed = results.filter((r) => r.error !== undefined);
    assert.deepEqual(failed, [], 'every call was answered (an honest LatticeUnavailable at worst)');
  });
});
