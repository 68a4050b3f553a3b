// Replicas agree right after an edit (core/evidence.ts), against the real wadm: the edit is
// answered by one replica, the next syncs alternate between another and replicas started afresh,
// while wadm's status publications are held at a gate on wadm's own NATS connection (so its
// latest status, read or heard, stays the previous version's). No answer may say Ready=True
// before wadm reports on the new version; once it does, every replica says so.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startLattice } from '../support/host-sim.js';
import { condition, metacontrollerFor, type FakeMetacontroller, type K8sObject } from '../support/metacontroller.js';
import { startNatsGate, type NatsGate } from '../support/nats-gate.js';
import { startNatsServer } from '../support/nats-server.js';
import { wasmApp } from '../support/resources.js';
import { CleanupStack, startService, type RunningService } from '../support/service.js';
import { startRelayedWadm, type WadmRelay } from '../support/wadm-relay.js';
import { until } from '../support/wait.js';

const NAME = 'hello-world';
/** Far longer than the test: only wadm's report may end the wait, never the grace. */
const DEPLOY_GRACE_MS = 10 * 60_000;

const cleanups = new CleanupStack();
let natsUrl: string;
let gate: NatsGate;
let wadm: WadmRelay;

before(async () => {
  const nats = await startNatsServer();
  cleanups.after(() => nats.dispose());
  natsUrl = nats.url;
  gate = await startNatsGate(nats.port);
  cleanups.after(() => gate.close());
  wadm = await startRelayedWadm(nats.url, [], gate.url);
  cleanups.after(() => wadm.stop());
  const sim = await startLattice({ servers: nats.url, heartbeatMs: 500, waitForWadm: true });
  cleanups.after(() => sim.stop());
});
after(() => cleanups.run());

async function replica(): Promise<RunningService> {
  const running = await startService(cleanups, { NATS_URL: natsUrl }, { deployGraceMs: DEPLOY_GRACE_MS });
  await running.connected();
  return running;
}

const ready = (obj: K8sObject | undefined) => obj !== undefined && condition(obj, 'Ready')?.status === 'True';
/** The spread of the first component: a change wadm reports (reconciling, then deployed), unlike an annotation. */
const withInstances = (instances: number) => {
  const spec = wasmApp().build().spec as { components: { traits: { properties: Record<string, unknown> }[] }[] };
  spec.components[0]!.traits[0]!.properties['instances'] = instances;
  return wasmApp().with({ components: spec.components }).build();
};

describe('replicas right after an edit, with wadm holding back its status', () => {
  it('never answer Ready=True before wadm reports on the new version, and all agree once it has', async () => {
    const a = metacontrollerFor((await replica()).url);
    a.apply(withInstances(1) as never);
    await a.waitFor('default', NAME, ready, { timeoutMs: 60_000 });
    // The same parents, called at another replica's URL: the calls alternate as a Service sends them.
    const at = (service: RunningService): FakeMetacontroller => metacontrollerFor(service.url, { api: a.api });
    const b = at(await replica());
    // B has served the resource before: it watches the lattice, and hears wadm announce the edit's deploy.
    await b.reconcile('default', NAME);

    gate.hold(`wadm.status.default.${NAME}`);
    a.apply(withInstances(2) as never);
    await a.reconcile('default', NAME);
    const edited = a.get('default', NAME)!.status as { version: string; deployedAt?: string };
    assert.equal((await wadm.model('default', NAME))?.deployed, edited.version, 'A deployed the edit');
    assert.ok(edited.deployedAt, 'and says since when it awaits wadm');
    await until(() => gate.held() > 0, { what: 'wadm publishing a status after the deploy (held at the gate)' });

    const answers: string[] = [];
    for (let i = 0; i < 6; i++) {
      const mc = i % 2 === 0 ? b : at(await replica());
      const pass = await mc.reconcile('default', NAME);
      assert.equal(pass.error, undefined);
      const obj = mc.get('default', NAME)!;
      answers.push(`${condition(obj, 'Ready')!.status}/${condition(obj, 'Ready')!.reason}`);
    }
    assert.deepEqual(new Set(answers), new Set(['False/Progressing']), `while wadm's report is held: ${answers.join(', ')}`);
    assert.equal((a.get('default', NAME)!.status as { deployedAt?: string }).deployedAt, edited.deployedAt, 'one anchor throughout');

    gate.release();
    await b.waitFor('default', NAME, ready, { timeoutMs: 60_000 });
    const settled = JSON.stringify(b.get('default', NAME)!.status);
    for (const mc of [a, b, at(await replica())]) {
      await mc.reconcile('default', NAME);
      assert.equal(JSON.stringify(mc.get('default', NAME)!.status), settled, 'every replica, fresh or not, says the same');
    }
  });
});
