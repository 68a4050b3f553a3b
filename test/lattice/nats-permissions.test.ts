// The service's NATS user limited as SECURITY.md recommends, against a real nats-server, the real
// wadm and simulated hosts, the service run from its build as production runs it. Issue 27: a
// lattice outside the user's permissions crashed the process. NATS refuses the service's
// subscriptions to that lattice's status and events, nats.js ends the subscription's iterator
// with the error, and that rejection was thrown outside any try: the process died, and every
// hook with it. Now a refused lattice is a Stalled resource (LatticeNotPermitted) that names the
// refused subject and the grant it needs, a warning and a count; the lattices the user may use
// keep working in the same process, a lattice with a `-` (whose index key the service checks
// through a lattice the user may not use) included, and deletion sends nothing NATS would refuse
// but the reads, keeping the finalizer of a refused lattice's resource until Orphan lets it go.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resyncJitter } from '../../src/core/status.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { condition, latticeMetacontrollerFor, type FakeMetacontroller, type K8sObject } from '../support/metacontroller.js';
import { HOST_EVENTS } from '../../src/lattice/subjects.js';
import type { WasmCloudLatticeStatus } from '../../src/schema/lattice.js';
import { startLatticeStage, type LatticeStage } from '../support/lattice-stage.js';
import type { NatsServer } from '../support/nats-server.js';
import { wasmApp, type AppBuilder } from '../support/resources.js';
import type { ServiceProcess } from '../support/service-process.js';
import { until } from '../support/wait.js';

/** The lattices the service's NATS user is granted; every other one is refused. */
const SERVED = ['allowed', 'team-a'];
/** The lattice whose hosts' heartbeats it is granted too (SECURITY.md, for a WasmCloudLattice). */
const DESCRIBED = 'team-a';
const PASSWORD = 'svc-pw-4c8e2a6b0d';
const KEY_READ_WARNING = `checking lattice "team-a"'s index key through its own list of applications`;

/** Two users: `admin` may do anything (wadm, the hosts and the test, which connect without credentials), `service` only what SECURITY.md says. */
function natsConfig(): string {
  const quoted = (subjects: string[]) => subjects.map((s) => JSON.stringify(s)).join(', ');
  const publish = SERVED.map((l) => `wadm.api.${l}.>`);
  // The heartbeat subjects of the lattices a WasmCloudLattice describes: team-a's only.
  const hosts = HOST_EVENTS.map((event) => `wasmbus.evt.${DESCRIBED}.${event}`);
  const subscribe = [...SERVED.flatMap((l) => [`wadm.status.${l}.*`, `wadm.evt.${l}.>`]), ...hosts, '_INBOX.>'];
  return `authorization {
  users = [
    { user: admin, password: "admin-pw-9d1f3b5e7a" }
    { user: service, password: "${PASSWORD}"
      permissions {
        publish { allow: [${quoted(publish)}] }
        subscribe { allow: [${quoted(subscribe)}] }
      }
    }
  ]
}
no_auth_user: admin
`;
}

let dir: string;
let stage: LatticeStage;
let service: ServiceProcess;
let nats: NatsServer;
let mc: FakeMetacontroller;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'nats-perm-'));
  const configFile = join(dir, 'nats-server.conf');
  writeFileSync(configFile, natsConfig());
  const passwordFile = join(dir, 'password');
  writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  // DEFAULT_LATTICE is watched from the start: one the user may use, so that every refusal counted is of a resource's lattice.
  stage = await startLatticeStage({
    hosted: SERVED,
    nats: { configFile },
    serviceEnv: { NATS_USER: 'service', NATS_PASSWORD_FILE: passwordFile, DEFAULT_LATTICE: 'allowed' },
    service: { built: true },
  });
  ({ service, nats, mc } = stage);
  await until(async () => (await service.ready()) === 200, { what: 'the service connected to NATS', timeoutMs: 60_000 });
});
after(async () => {
  await stage?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// ---- helpers ------------------------------------------------------------------------------------

const app = (namespace: string, name: string, lattice: string): AppBuilder =>
  wasmApp().inLattice(lattice).named(name).inNamespace(namespace);
const ready = (obj: K8sObject | undefined) => condition(obj, 'Ready');
const message = (obj: K8sObject | undefined) => String(ready(obj)?.message);

async function reconciledUntil(
  namespace: string,
  name: string,
  lattice: string,
  done: (obj: K8sObject | undefined) => boolean,
): Promise<K8sObject> {
  mc.apply(app(namespace, name, lattice).build() as never);
  const { object } = await mc.waitFor(namespace, name, done, { timeoutMs: 90_000, intervalMs: 100 });
  return object!;
}
const deployed = (namespace: string, name: string, lattice: string) =>
  reconciledUntil(namespace, name, lattice, (obj) => ready(obj)?.status === 'True');

/** A GET of the service; a process that died (issue 27) fails the test with its last log lines, not with "fetch failed". */
async function get(path: string): Promise<Response> {
  try {
    return await fetch(`${service.url}${path}`);
  } catch (err) {
    const last = service.logs
      .slice(-5)
      .map((l) => JSON.stringify(l))
      .join('\n');
    throw new Error(`the service does not answer GET ${path} (${(err as Error).message}): has it exited? last log lines:\n${last}`);
  }
}

/** Every series of the service's /metrics named `name`, with its labels. */
async function series(name: string): Promise<{ labels: Record<string, string>; value: number }[]> {
  const text = await (await get('/metrics')).text();
  const prefix = `wasmcloud_metacontroller_${name}`;
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${prefix}{`) || line.startsWith(`${prefix} `))
    .map((line) => {
      const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
      return { labels, value: Number(line.slice(line.lastIndexOf(' ') + 1)) };
    });
}

/** Requests the service sent to wadm for these operations, whatever their outcome. */
async function wadmRequests(operations: string[]): Promise<number> {
  return (await series('wadm_requests_total'))
    .filter((s) => operations.includes(s.labels['operation']!))
    .reduce((sum, s) => sum + s.value, 0);
}

/** One series' value (0 when absent). */
async function metric(name: string): Promise<number> {
  await get('/healthz');
  return service.metric(name);
}

const WRITES = ['put', 'deploy', 'undeploy', 'del'];
const publishDenied = () => metric('nats_permission_denied_total{operation="publish"}');
const subscribeDenied = () => metric('nats_permission_denied_total{operation="subscribe"}');
const unhandledRejections = () => metric('unhandled_rejections_total');

/**
 * The subjects a nats-server log shows a publish violation of, for the service's user. Up to 2.11
 * the line names the user: `Publish Violation - User "service", Subject "…"`; from 2.12 the
 * client's prefix does, with its account: `"$G/user:service" - Publish Violation - Subject "…"`.
 */
function publishViolationsOfService(log: string): string[] {
  const violation = /(?:Publish Violation - User "service", |"[^"/]*\/user:service" - Publish Violation - )Subject "([^"]+)"/g;
  return [...log.matchAll(violation)].map((m) => m[1]!);
}
const refusedPublishes = () => publishViolationsOfService(nats.output());

/** nats-server's list of refused publishes, once it holds as many as the service counted (it logs after it answers). */
async function refusedPublishesCounted(): Promise<string[]> {
  const counted = await publishDenied();
  return until(() => (refusedPublishes().length === counted ? refusedPublishes() : undefined), {
    what: () => `${counted} publish violations in:\n${nats.output()}`,
  });
}

function warnings(predicate: (line: Record<string, unknown>) => boolean): Record<string, unknown>[] {
  return service.logs.filter((l) => l['level'] === 40 && predicate(l));
}

async function statusOf(path: string): Promise<number> {
  const res = await get(path);
  await res.arrayBuffer();
  return res.status;
}

/** The process is up, connected and serving, and no promise rejection went unhandled. */
async function assertAlive(): Promise<void> {
  assert.equal(await statusOf('/healthz'), 200);
  assert.equal(await statusOf('/readyz'), 200);
  assert.equal(await unhandledRejections(), 0, 'unhandled promise rejections');
  assert.deepEqual(
    service.logs.filter((l) => String(l['msg']).startsWith('unhandled promise rejection')),
    [],
  );
}

async function wadmVersions(lattice: string, name: string): Promise<string> {
  const reply = await stage.nc.request(`wadm.api.${lattice}.model.versions.${name}`, '', { timeout: 5000 });
  return (JSON.parse(reply.string()) as { result: string }).result;
}

// ---- the tests ----------------------------------------------------------------------------------

const FORBIDDEN = { namespace: 'tenant-f', name: 'hello-f', lattice: 'forbidden' };

describe("nats-server's log of refused publishes", () => {
  it('is read in the format of every tested version, for the service user only (logged by 2.11.17 and 2.12.15)', () => {
    const log = [
      '[9] [ERR] 127.0.0.1:5 - cid:7 - Publish Violation - User "service", Subject "wadm.api.x.model.versions.a"',
      '[9] [ERR] 127.0.0.1:5 - cid:7 - "v2.29.3:nats.js:svc" - "$G/user:service" - Publish Violation - Subject "wadm.api.y.model.versions.b"',
      '[9] [ERR] 127.0.0.1:6 - cid:8 - Publish Violation - User "admin", Subject "wadm.api.z.model.versions.c"',
      '[9] [ERR] 127.0.0.1:6 - cid:8 - "nats.js" - "$G/user:admin" - Publish Violation - Subject "wadm.api.z.model.versions.d"',
      '[9] [ERR] 127.0.0.1:5 - cid:7 - "v2.29.3:nats.js:svc" - "$G/user:service" - Subscription Violation - Subject "wadm.evt.x.>", SID 4',
    ].join('\n');
    assert.deepEqual(publishViolationsOfService(log), ['wadm.api.x.model.versions.a', 'wadm.api.y.model.versions.b']);
  });
});

describe('the service with a NATS user limited to its lattices (SECURITY.md)', () => {
  it('a lattice outside the permissions is Stalled (LatticeNotPermitted), names what to grant, and the process lives on', async () => {
    const { namespace, name, lattice } = FORBIDDEN;
    const obj = await reconciledUntil(namespace, name, lattice, (o) => ready(o)?.reason === 'LatticeNotPermitted');
    assert.equal(ready(obj)?.status, 'False');
    assert.equal(condition(obj, 'Stalled')?.status, 'True');
    assert.equal(condition(obj, 'Stalled')?.reason, 'LatticeNotPermitted');
    assert.equal(
      message(obj),
      `Cannot use lattice "forbidden": NATS refused this service's user to publish to "wadm.api.forbidden.model.versions.${name}" (permissions violation); ` +
        'grant it publish on "wadm.api.forbidden.>" and subscribe on "wadm.status.forbidden.*" and "wadm.evt.forbidden.>" (see SECURITY.md); will retry',
    );
    assert.ok((await publishDenied()) >= 1);

    // The subscriptions to its status and events, refused too (NATS says so a moment later): counted and
    // said, not a rejection nothing handles (which crashed the process before, or now counts as a bug).
    await until(async () => (await subscribeDenied()) >= 1 || (await unhandledRejections()) > 0, {
      what: 'the refused subscription handled',
      timeoutMs: 60_000,
    });
    assert.equal(await unhandledRejections(), 0, 'unhandled promise rejections');
    const aboutSubscription = () => warnings((l) => ['wadm.status.forbidden.*', 'wadm.evt.forbidden.>'].includes(String(l['subject'])));
    const [said] = await until(() => aboutSubscription().length > 0 && aboutSubscription(), {
      what: () => `a warning naming the refused subscription in ${JSON.stringify(warnings(() => true))}`,
    });
    assert.equal(said!['lattice'], 'forbidden');
    assert.match(
      String(said!['msg']),
      /^NATS refused the subscription to wadm\.(status\.forbidden\.\*|evt\.forbidden\.>): lattice "forbidden"/,
    );

    // More reconciles: the same answer each time, a resync in 60 s, one more refused read each.
    for (let pass = 0; pass < 3; pass++) {
      const deniedBefore = await publishDenied();
      const result = await mc.reconcile(namespace, name);
      assert.deepEqual(
        [result.httpStatus, result.resyncAfterSeconds, result.statusChanged],
        [200, resyncJitter(60, `${namespace}/${name}`), false],
        JSON.stringify(result),
      );
      assert.equal(await publishDenied(), deniedBefore + 1, 'one more refused read');
    }
    assert.equal(message(mc.get(namespace, name)), message(obj));

    // What nats-server refused is what the service counted: reads of that one model, nothing else.
    const refused = await refusedPublishesCounted();
    assert.ok(refused.length >= 4, refused.join('\n'));
    assert.deepEqual(new Set(refused), new Set([`wadm.api.forbidden.model.versions.${name}`]));
    await assertAlive();
  });

  it('a lattice in the permissions deploys in the same process, after the refused one', async () => {
    const subscribeRefusals = await subscribeDenied();
    const obj = await deployed('tenant-a', 'hello-a', 'allowed');
    assert.equal(ready(obj)?.reason, 'Deployed');
    assert.equal(await wadmVersions('allowed', 'hello-a'), 'success');
    assert.equal(await subscribeDenied(), subscribeRefusals, 'its subscriptions were not refused');
    // And the refused one is still refused, no worse for it.
    const again = await mc.reconcile(FORBIDDEN.namespace, FORBIDDEN.name);
    assert.deepEqual(
      [again.httpStatus, again.resyncAfterSeconds, again.statusChanged],
      [200, resyncJitter(60, `${FORBIDDEN.namespace}/${FORBIDDEN.name}`), false],
    );
    await assertAlive();
  });

  it('a lattice with a `-` deploys, its index key checked through its own list, said once', async () => {
    const deniedBefore = await publishDenied();
    const subscribeRefusals = await subscribeDenied();
    for (const name of ['hello-1', 'hello-2']) {
      const obj = await deployed('team-a', name, 'team-a');
      assert.equal(ready(obj)?.reason, 'Deployed');
    }
    // The log is a pipe, read in order: once the last answer is in, every line before it is too.
    await until(() => service.logs.some((l) => l['hook'] === 'sync' && l['name'] === 'hello-2' && l['reason'] === 'Deployed'), {
      what: 'the last answer logged',
    });
    const said = warnings((l) => String(l['msg']).startsWith(KEY_READ_WARNING));
    assert.equal(said.length, 1, JSON.stringify(said));
    assert.equal(said[0]!['lattice'], 'team-a');
    assert.match(String(said[0]!['err']), /publish to "wadm\.api\.team\.model\.versions\.a"/);
    assert.equal(await publishDenied(), deniedBefore + 1, 'one refused read: lattice team, for the first put');
    assert.equal((await refusedPublishesCounted()).filter((s) => s === 'wadm.api.team.model.versions.a').length, 1);
    assert.equal(await subscribeDenied(), subscribeRefusals, 'its subscriptions were not refused');
    await assertAlive();
  });

  it('deletion: the refused lattice keeps its finalizer, saying what to grant, until deletionPolicy Orphan lets it go; the served ones are removed from wadm', async () => {
    const { namespace, name } = FORBIDDEN;
    const writesBefore = await wadmRequests(WRITES);
    const deniedBefore = await publishDenied();
    // Nothing shows what wadm holds there: a mistaken ACL must not leak a running application.
    const waiting = await mc.deleteAndFinalize(namespace, name, { maxPasses: 1 });
    assert.deepEqual(
      [waiting.removed, waiting.results[0]?.hook, waiting.results[0]?.finalized ?? false, waiting.results[0]?.resyncAfterSeconds],
      [false, 'finalize', false, resyncJitter(60, `${namespace}/${name}`)],
    );
    assert.equal(ready(waiting.object)?.reason, 'LatticeNotPermitted');
    assert.equal(
      message(waiting.object),
      `Cannot delete in lattice "forbidden": NATS refused this service's user to publish to "wadm.api.forbidden.model.versions.${name}" (permissions violation); ` +
        'grant it publish on "wadm.api.forbidden.>" and subscribe on "wadm.status.forbidden.*" and "wadm.evt.forbidden.>" (see SECURITY.md); ' +
        'the finalizer stays until that is granted (to leave the application in wadm instead, set spec.deletionPolicy to Orphan or remove the finalizer by hand); will retry',
    );
    // The way out it names: Orphan, which sends nothing.
    mc.apply(app(namespace, name, FORBIDDEN.lattice).with({ deletionPolicy: 'Orphan' }).build() as never);
    const gone = await mc.deleteAndFinalize(namespace, name);
    assert.deepEqual([gone.removed, gone.passes, gone.results[0]?.hook, gone.results[0]?.finalized], [true, 1, 'finalize', true]);
    assert.equal(await publishDenied(), deniedBefore + 1, 'it asked once, and was refused');
    assert.equal(await wadmRequests(WRITES), writesBefore, 'no put, deploy, undeploy or delete sent');
    assert.equal(await wadmVersions('forbidden', name), 'notfound', 'nothing of it ever reached wadm');
    // Over the whole run, NATS refused the service reads only: of the forbidden model, and of lattice team's key.
    assert.deepEqual(
      new Set(await refusedPublishesCounted()),
      new Set([`wadm.api.forbidden.model.versions.${name}`, 'wadm.api.team.model.versions.a']),
    );

    for (const [ns, n, lattice] of [
      ['tenant-a', 'hello-a', 'allowed'],
      ['team-a', 'hello-1', 'team-a'],
      ['team-a', 'hello-2', 'team-a'],
    ] as const) {
      assert.equal(await wadmVersions(lattice, n), 'success');
      assert.equal((await mc.deleteAndFinalize(ns, n)).removed, true);
      assert.equal(await wadmVersions(lattice, n), 'notfound', `${lattice}/${n} is gone from wadm`);
    }
    await assertAlive();
  });
});

describe('WasmCloudLattices with the NATS user of SECURITY.md', () => {
  const lattices = () => latticeMetacontrollerFor(service.url);
  const latticeStatus = (obj: K8sObject | undefined) => obj?.status as WasmCloudLatticeStatus | undefined;

  it("hears the hosts of a lattice whose heartbeat subjects are granted, and lists its wadm's applications", async () => {
    const lmc = lattices();
    lmc.apply({ metadata: { name: DESCRIBED } });
    const { object } = await lmc.waitFor(
      '',
      DESCRIBED,
      (obj) => latticeStatus(obj)?.hostCount === 1 && latticeStatus(obj)?.wadmReachable === true,
      {
        timeoutMs: 60_000,
        intervalMs: 100,
      },
    );
    // Heard within the first heartbeat period (30 s for a service run as in production): Ready with
    // the one host an empty spec asks for, saying more may yet be heard.
    assert.equal(ready(object)?.reason, 'LatticeReady');
    assert.match(message(object), /^1 host heartbeating \(listening until .*: more may yet be heard\), \d+ applications?; wadm answers$/);
    assert.equal(latticeStatus(object)?.applicationsFrom, 'Wadm');
    await assertAlive();
  });

  it('says NatsNotPermitted for a lattice whose heartbeats are not granted, naming the subjects, and applications there keep working', async () => {
    const deniedBefore = await subscribeDenied();
    const lmc = lattices();
    lmc.apply({ metadata: { name: 'allowed' } });
    const { object } = await lmc.waitFor('', 'allowed', (obj) => ready(obj)?.reason === 'NatsNotPermitted', {
      timeoutMs: 60_000,
      intervalMs: 100,
    });
    assert.equal(condition(object, 'Stalled')?.status, 'True');
    assert.match(
      message(object),
      /^Cannot hear the hosts of lattice "allowed": NATS refused this service's user to subscribe to "wasmbus\.evt\.allowed\.host_(heartbeat|started|stopped)" \(permissions violation\); grant it subscribe on "wasmbus\.evt\.allowed\.host_heartbeat", "wasmbus\.evt\.allowed\.host_started", "wasmbus\.evt\.allowed\.host_stopped" \(see SECURITY\.md\)$/,
    );
    assert.ok((await subscribeDenied()) > deniedBefore, 'counted in nats_permission_denied_total{operation="subscribe"}');
    const again = await lmc.reconcile('', 'allowed');
    assert.deepEqual([again.httpStatus, again.resyncAfterSeconds, again.statusChanged], [200, 300, false], 'retried every 5 minutes');
    const app = await deployed('tenant-c', 'hello-c', 'allowed');
    assert.equal(ready(app)?.reason, 'Deployed', "the lattice's applications are none the worse for it");
    await assertAlive();
  });
});
