// The WasmCloudLattice end to end on the fast tier: the real nats-server, the real wadm (behind the
// relay), simulated hosts with labels joining, leaving and crashing, the whole service in-process,
// and the Metacontroller emulator running manifests/lattice-controller.yaml (parents in memory).
// The real API server's side is test/kube/lattice.test.ts.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { resolve } from 'node:path';
import { WADM_STALL_TOLERANT_MS, type SimulatedLattice } from '../support/host-sim.js';
import { condition, type FakeMetacontroller, type K8sObject } from '../support/metacontroller.js';
import { startLatticeResourceStage, type LatticeResourceStage } from '../support/lattice-resources.js';
import { wasmApp } from '../support/resources.js';
import { until } from '../support/wait.js';
import type { WasmCloudLatticeStatus } from '../../src/schema/lattice.js';

const LATTICE = 'hosted';
const WAIT = { timeoutMs: WADM_STALL_TOLERANT_MS, intervalMs: 100 };

let stage: LatticeResourceStage;
let sim: SimulatedLattice;
let apps: FakeMetacontroller;
let lattices: FakeMetacontroller;

before(async () => {
  // Hosts heartbeat every 500 ms: listening and the first guess of their period last a second.
  stage = await startLatticeResourceStage({
    lattice: LATTICE,
    hosts: [{ labels: { zone: 'eu' } }, { labels: { zone: 'us' } }],
    service: { hostHeartbeatMs: 1000, latticeListPeriodMs: 1000 },
  });
  ({ sim, apps, lattices } = stage);
  lattices.apply({ metadata: { name: LATTICE } });
});
after(() => stage?.stop());

/** What docs/lattice.md shows the service adding to wadm's message (its example's second line). */
function pageExample(): string {
  const page = readFileSync(resolve(import.meta.dirname, '../../docs/lattice.md'), 'utf8');
  const section = page.slice(page.indexOf('## Placement explained'));
  return section.split('```text\n')[1]!.split('\n')[1]!;
}

/** The applications the live simulated hosts run (wadm's `wasmcloud.dev/appspec`), with how many hosts run each. */
function hostsRun(): { name: string; hosts: number }[] {
  const hosts = new Map<string, Set<string>>();
  for (const { hostId, annotations } of [...sim.components(), ...sim.providers()]) {
    const name = annotations['wasmcloud.dev/appspec'];
    if (name !== undefined) hosts.set(name, (hosts.get(name) ?? new Set()).add(hostId));
  }
  return [...hosts].map(([name, on]) => ({ name, hosts: on.size })).sort((a, b) => (a.name < b.name ? -1 : 1));
}

const status = (obj: K8sObject | undefined) => obj?.status as WasmCloudLatticeStatus | undefined;

/** Reconciles the lattice (as resyncs would) until its status satisfies `predicate`. */
async function latticeUntil(predicate: (s: WasmCloudLatticeStatus) => boolean): Promise<WasmCloudLatticeStatus> {
  const { object } = await lattices.waitFor('', LATTICE, (obj) => status(obj) !== undefined && predicate(status(obj)!), WAIT);
  return status(object)!;
}

describe('a WasmCloudLattice', () => {
  it('is Ready with its hosts, their labels and the namespaces let in', async () => {
    const s = await latticeUntil((s) => condition({ status: s } as K8sObject, 'Ready')?.status === 'True' && s.hostCount === 2);
    assert.equal(s.lattice, LATTICE);
    assert.equal(s.hostCount, 2);
    assert.deepEqual(
      s.hosts!.map((h) => [h.friendlyName, h.labels['zone'], h.version]),
      [
        ['sim-host-1', 'eu', '1.9.2'],
        ['sim-host-2', 'us', '1.9.2'],
      ],
    );
    assert.match(s.hosts![0]!.lastHeartbeat, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.deepEqual(
      s.hostLabels!.find((l) => l.key === 'zone'),
      { key: 'zone', values: ['eu', 'us'], hosts: 2 },
    );
    assert.equal(s.wadmReachable, true);
    assert.deepEqual(s.namespaces, ['*'], "the tests' policy lets every namespace use every lattice");
    assert.equal(s.applicationsFrom, 'Wadm');
    const scrape = await stage.running.service.metrics.registry.metrics();
    assert.match(scrape, new RegExp(`^wasmcloud_metacontroller_lattice_hosts\\{lattice="${LATTICE}"\\} 2$`, 'm'), 'hosts per lattice');
  });

  it("lists the applications with their owners: a resource's, and one put with wadm's API (unowned)", async () => {
    apps.apply(wasmApp().inLattice(LATTICE).inNamespace('team-a').build() as never);
    await apps.waitFor('team-a', 'hello-world', (obj) => condition(obj, 'Ready')?.status === 'True', WAIT);
    await stage.putUnowned('washed', { deploy: true });
    const s = await latticeUntil(
      (s) =>
        s.applicationCount === 2 &&
        (s.applications ?? []).every((a) => a.owner !== undefined || a.unowned) &&
        (s.applications?.[0]?.hosts ?? 0) >= 1,
    );
    const [hello, washed] = s.applications!;
    assert.equal(hello!.name, 'hello-world');
    assert.equal(hello!.owner, 'team-a/hello-world');
    assert.equal(hello!.status, 'Deployed');
    assert.match(hello!.deployedVersion!, /^sha-[0-9a-f]{16}$/);
    assert.deepEqual(
      { name: washed!.name, deployedVersion: washed!.deployedVersion, unowned: washed!.unowned },
      {
        name: 'washed',
        deployedVersion: 'v1',
        unowned: true,
      },
    );
  });

  it('counts hosts as they join, stop and crash', async () => {
    const joined = await sim.addHost({ labels: { zone: 'ap' } });
    let s = await latticeUntil((s) => s.hostCount === 3);
    assert.ok(s.hosts!.some((h) => h.id === joined.id && h.labels['zone'] === 'ap'));
    await sim.stopHost(joined.id);
    s = await latticeUntil((s) => s.hostCount === 2);
    assert.ok(!s.hosts!.some((h) => h.id === joined.id), 'host_stopped takes a host out at once');
    const crashing = sim.hosts.find((h) => h.labels['zone'] === 'us')!;
    sim.crashHost(crashing.id);
    s = await latticeUntil((s) => s.hostCount === 1);
    assert.deepEqual(
      s.hosts!.map((h) => h.labels['zone']),
      ['eu'],
      'a host that stopped heartbeating is gone',
    );
    assert.equal(condition({ status: s } as K8sObject, 'Ready')?.status, 'True', 'one host is all an empty spec asks');
  });

  it('says which hosts are missing when the spec asks for more, and is Ready again once they heartbeat', async () => {
    lattices.apply({ metadata: { name: LATTICE }, spec: { requiredHosts: [{ labels: { zone: 'us' } }] } });
    const missing = await latticeUntil((s) => condition({ status: s } as K8sObject, 'Ready')?.reason === 'HostsMissing');
    assert.match(missing.message!, /spec\.requiredHosts\[0\] needs 1 host with zone=us, 0 heartbeat \(the hosts have .*zone=eu \(1 host\)/);
    assert.equal(condition({ status: missing } as K8sObject, 'Reconciling')?.status, 'True');
    await sim.addHost({ labels: { zone: 'us' } });
    await latticeUntil((s) => condition({ status: s } as K8sObject, 'Ready')?.status === 'True');
  });

  it('explains to an application no host can place which labels the hosts have, in its own status only', async () => {
    const spread = [{ name: 'moon', requirements: { zone: 'moon' } }];
    const app = wasmApp().inLattice(LATTICE).inNamespace('team-b').named('lunar').build();
    const components = structuredClone(app.spec['components']) as { traits: { type: string; properties: Record<string, unknown> }[] }[];
    components[0]!.traits.find((t) => t.type === 'spreadscaler')!.properties['spread'] = spread;
    apps.apply({ ...app, spec: { ...app.spec, components } } as never);
    const { object } = await apps.waitFor(
      'team-b',
      'lunar',
      (obj) =>
        condition(obj, 'Ready')?.reason === 'ScalerFailed' && /the \d hosts? of lattice/.test(condition(obj, 'Ready')?.message ?? ''),
      WAIT,
    );
    const message = condition(object, 'Ready')!.message!;
    assert.match(message, /Spread requirement conflict: moon spread requires/, "wadm's own words first");
    assert.match(message, /no host of lattice "hosted" has zone=moon \(spread "moon" of http-component\)/);
    assert.ok(message.endsWith(`; ${pageExample()}`), `docs/lattice.md shows what the service says:\n${message}`);
    assert.doesNotMatch(message, /hello-world|team-a/, "another namespace's applications are not named");
  });

  it("lists the applications the hosts run when wadm's list is too large to send (the crowded-lattice fallback)", async () => {
    // Whatever wadm placed where (see below), one component surely runs on a live host: started by
    // hand, as `wash start component` does, labelled with an application wadm does not manage.
    const eu = sim.hosts.find((h) => h.labels['zone'] === 'eu')!;
    const scale = { component_id: 'by-hand', component_ref: 'ghcr.io/example/by-hand:0.1.0', count: 1 };
    const started = await stage.nc.request(
      `wasmbus.ctl.v1.${LATTICE}.component.scale.${eu.id}`,
      JSON.stringify({ ...scale, annotations: { 'wasmcloud.dev/appspec': 'by-hand' } }),
      { timeout: WAIT.timeoutMs },
    );
    assert.equal(started.json<{ success: boolean }>().success, true);
    await until(() => sim.components().some((c) => c.id === 'by-hand'), { ...WAIT, what: 'the host runs by-hand' });
    await sim.heartbeatNow();
    // Past NATS's max_payload wadm cannot send the list: the request goes unanswered for its whole
    // wait, every time. Every `get` is lost from now on: the applications' own resyncs read their
    // models with a `get` too, and a one-shot fault could go to one of them instead of the list.
    stage.wadm.inject('get', { kind: 'lost-request' }, { times: Number.POSITIVE_INFINITY });
    const first = await latticeUntil((s) => s.applicationsFrom === 'Heartbeats');
    assert.deepEqual(
      stage.wadm.requests.filter((r) => r.op === 'history').map((r) => r.lattice),
      [LATTICE],
      'one probe, not one per call',
    );
    assert.equal(first.wadmReachable, true, 'a probe shows wadm answers');
    assert.equal(condition({ status: first } as K8sObject, 'Ready')?.status, 'True');
    // What the live hosts run is wadm's doing, in its own time: the host crashed above may have run
    // some of hello-world, which wadm places again only once it has reaped that silent host. So the
    // list is checked against what the hosts run, as their heartbeats say it.
    const s = await latticeUntil((s) => s.applicationsFrom === 'Heartbeats' && isDeepStrictEqual(s.applications, hostsRun()));
    assert.ok(
      s.applications!.some((a) => a.name === 'by-hand' && a.hosts === 1),
      JSON.stringify(s.applications),
    );
    for (const app of s.applications!) {
      assert.equal(app.owner ?? app.version ?? app.status, undefined, `${app.name}: no version, status or owner without the list`);
    }
  });
});
