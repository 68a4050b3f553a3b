// The host simulator against the REAL wadm 0.21.1 on a real nats-server (JetStream): wadm must
// take applications to `deployed`, `failed` and `undeployed` exactly as it would with wasmCloud
// 1.x hosts. Each test uses its own lattice, because wadm keeps hosts and instances per lattice.
// HOST_SIM_DEBUG=1 prints wadm's log at the end (with WADM_RUST_LOG=debug for the details).
import { after, before, describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import yaml from 'js-yaml';
import { connect, headers, JSONCodec, nkeys, type NatsConnection, type Subscription } from 'nats';
import { startLattice, WADM_STALL_TOLERANT_MS, type CtlRequest, type LatticeOptions, type SimulatedLattice } from '../support/host-sim.js';
import { publishEvent } from '../support/host-sim/events.js';
import { untilWadmHoldsOnly, wadmHeldHosts } from '../support/host-sim/wadm-ready.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { fixtureText } from '../support/fixtures.js';
import { startWadm, type WadmProcess } from '../support/wadm.js';
import { sleep, until } from '../support/wait.js';

const HELLO_COMPONENT = 'ghcr.io/wasmcloud/components/http-hello-world-rust:0.1.0';
const HTTP_PROVIDER = 'ghcr.io/wasmcloud/http-server:0.23.0';
const json = JSONCodec<Record<string, unknown>>();

interface StatusInfo {
  type: string;
  message?: string;
}
interface ScalerStatus {
  id: string;
  kind: string;
  name: string;
  status: StatusInfo;
}
interface AppStatus {
  status: StatusInfo;
  scalers?: ScalerStatus[];
}

let nats: NatsServer;
let wadm: WadmProcess;
let nc: NatsConnection;

before(async () => {
  nats = await startNatsServer();
  wadm = await startWadm(nats.url);
  nc = await connect({ servers: nats.url });
});
after(async () => {
  await nc?.drain();
  if (process.env['HOST_SIM_DEBUG']) console.log(wadm.output());
  await wadm?.stop();
  await nats?.dispose();
});

// ---- helpers ---------------------------------------------------------------------------------

async function openLattice(t: TestContext, lattice: string, options: Partial<LatticeOptions> = {}): Promise<SimulatedLattice> {
  const sim = await startLattice({ servers: nats.url, lattice, heartbeatMs: 500, waitForWadm: true, ...options });
  t.after(() => sim.stop());
  return sim;
}

/** The ids of the hosts wadm's store holds for a lattice. */
const heldHosts = async (lattice: string) => Object.keys(await wadmHeldHosts(nc, lattice)).sort();

/** wadm's API for one lattice, spoken directly over NATS as the Rust client does. */
function wadmApi(lattice: string) {
  const request = async (op: string, body: unknown, contentType?: string) => {
    const h = headers();
    if (contentType) h.set('Content-Type', contentType);
    const reply = await nc.request(`wadm.api.${lattice}.model.${op}`, json.encode(body as Record<string, unknown>), {
      timeout: 5000,
      headers: h,
    });
    return json.decode(reply.data);
  };
  return {
    async putAndDeploy(manifest: Record<string, unknown>): Promise<void> {
      const put = await request('put', manifest, 'application/json');
      assert.equal(put['result'], 'created', JSON.stringify(put));
      const deploy = await request(`deploy.${String(put['name'])}`, { version: put['current_version'] });
      assert.equal(deploy['result'], 'acknowledged', JSON.stringify(deploy));
    },
    async undeploy(name: string): Promise<void> {
      const reply = await request(`undeploy.${name}`, {});
      assert.equal(reply['result'], 'acknowledged', JSON.stringify(reply));
    },
    async status(name: string): Promise<AppStatus> {
      const reply = await request(`status.${name}`, {});
      assert.equal(reply['result'], 'ok', JSON.stringify(reply));
      return reply['status'] as AppStatus;
    },
  };
}

/** Every message wadm publishes on `wadm.status.{lattice}.{app}`, in order. */
class StatusLog {
  readonly seen: AppStatus[] = [];
  private readonly sub: Subscription;

  constructor(lattice: string, app: string) {
    this.sub = nc.subscribe(`wadm.status.${lattice}.${app}`, {
      callback: (err, msg) => {
        if (!err) this.seen.push(json.decode(msg.data) as unknown as AppStatus);
      },
    });
  }

  /**
   * The first status of `type` published after the first `from` messages; a miss reports what wadm said
   * and logged.
   */
  until(type: string, from = 0): Promise<AppStatus> {
    const what = () =>
      `a "${type}" status after ${from}; seen: ${JSON.stringify(this.seen.map((s) => s.status.type))}\n` +
      `wadm's log (tail):\n${wadm.output().split('\n').slice(-30).join('\n')}`;
    return until(() => this.seen.slice(from).find((s) => s.status.type === type), { what, timeoutMs: WADM_STALL_TOLERANT_MS });
  }

  close(): void {
    this.sub.unsubscribe();
  }
}

function watch(t: TestContext, lattice: string, app: string): StatusLog {
  const log = new StatusLog(lattice, app);
  t.after(() => log.close());
  return log;
}

function manifest(file: string): Record<string, unknown> {
  return yaml.load(fixtureText(file)) as Record<string, unknown>;
}

/** hello.yaml with both the component and the provider spread onto hosts labelled `requirements`. */
function helloRequiring(requirements: Record<string, string>): Record<string, unknown> {
  const hello = manifest('hello.yaml') as { spec: { components: { traits?: { type: string; properties: Record<string, unknown> }[] }[] } };
  const spread = [{ name: 'picky', requirements }];
  for (const component of hello.spec.components) {
    const traits = (component.traits ??= []);
    const scaler = traits.find((tr) => tr.type === 'spreadscaler');
    if (scaler) scaler.properties['spread'] = spread;
    else traits.push({ type: 'spreadscaler', properties: { instances: 1, spread } });
  }
  return hello as unknown as Record<string, unknown>;
}

const scaler = (status: AppStatus | undefined, name: string) => status?.scalers?.find((s) => s.name === name)?.status;
/** The writes among control requests (`component.scale`, `link.put`, …), without the reads. */
const commands = (requests: CtlRequest[]) =>
  requests.map((r) => r.operation.split('.').slice(0, 2).join('.')).filter((op) => !op.endsWith('.get'));

/** Waits until wadm has handled a heartbeat published now: it answers each one with claims.get. */
async function heartbeatHandled(sim: SimulatedLattice): Promise<void> {
  const claims = () => sim.requests().filter((r) => r.operation === 'claims.get').length;
  const before = claims();
  await sim.heartbeatNow();
  await until(() => claims() !== before, { what: 'claims.get after a heartbeat', timeoutMs: WADM_STALL_TOLERANT_MS });
  // The scalers run after claims.get, and nothing marks their end when they decide nothing. This pause only gives a
  // wrong command or status time to show; it cannot fail a test that is right, only miss a late wrong one.
  await sleep(100);
}

// ---- tests -----------------------------------------------------------------------------------

describe('simulated wasmCloud hosts driven by the real wadm 0.21.1', () => {
  it('hello-world reaches deployed, and the host runs the component and provider and holds the link and config', async (t) => {
    const sim = await openLattice(t, 'default', { heartbeatMs: 30_000 });
    const host = sim.hosts[0]!.id;
    const log = watch(t, 'default', 'hello-world');
    const api = wadmApi('default');

    await api.putAndDeploy(manifest('hello.yaml'));
    const deployed = await log.until('deployed');

    // wadm lists its scalers in an order it does not promise: compare them as a set.
    assert.deepEqual(deployed.scalers?.map((s) => [s.kind, s.name, s.status.type]).sort(), [
      ['LinkScaler', 'hello_world-httpserver -(wasi:http)-> hello_world-http_component', 'deployed'],
      ['SpreadScaler', 'hello_world-http_component', 'deployed'],
      ['SpreadScaler', 'hello_world-httpserver', 'deployed'],
    ]);
    assert.deepEqual((await api.status('hello-world')).status, { type: 'deployed' });
    // wadm queues its scalers' commands in no order it promises (config.put and link.put included):
    // what it sent is asserted, not when.
    assert.deepEqual(commands(sim.requests()).sort(), ['component.scale', 'config.put', 'link.put', 'provider.start']);

    // The annotations wadm sent are echoed back: without them its scalers count no instance.
    assert.deepEqual(sim.components(), [
      {
        hostId: host,
        id: 'hello_world-http_component',
        imageRef: HELLO_COMPONENT,
        maxInstances: 1,
        annotations: {
          'wasmcloud.dev/appspec': 'hello-world',
          'wasmcloud.dev/managed-by': 'wadm',
          'wasmcloud.dev/scaler': 'a648fe966cbdb0a0dee3252a416f824858bbf0c1a24be850ef632626ddbb5133',
          'wasmcloud.dev/spread_name': 'default',
        },
      },
    ]);
    assert.deepEqual(
      sim.providers().map((p) => [p.hostId, p.id, p.imageRef, p.annotations['wasmcloud.dev/scaler']]),
      [[host, 'hello_world-httpserver', HTTP_PROVIDER, 'e82e835acda294f1a3d9cb66c0dfc8619c82fa836a1e30142d5d2b607357fc86']],
    );
    assert.deepEqual(sim.links(), [
      {
        source_id: 'hello_world-httpserver',
        target: 'hello_world-http_component',
        name: 'default',
        wit_namespace: 'wasi',
        wit_package: 'http',
        interfaces: ['incoming-handler'],
        source_config: ['hello_world-default_http'],
        target_config: [],
      },
    ]);
    assert.deepEqual(sim.config(), { 'hello_world-default_http': { ADDRESS: '127.0.0.1:8080' } });

    // A heartbeat that lists what runs, with the annotations, changes nothing in wadm.
    const sent = sim.requests().length;
    const published = log.seen.length;
    await heartbeatHandled(sim);
    assert.deepEqual(commands(sim.requests().slice(sent)), []);
    assert.equal(log.seen.length, published, 'no new status after a faithful heartbeat');
    t.diagnostic(`deployed status: ${JSON.stringify(deployed)}`);
  });

  it("a spread that requires a label no host has fails with wadm's message, and deploys once a host with the label joins", async (t) => {
    const sim = await openLattice(t, 'picky', { hosts: [{ labels: { zone: 'earth' } }] });
    const log = watch(t, 'picky', 'hello-world');
    await wadmApi('picky').putAndDeploy(helloRequiring({ zone: 'moon' }));

    const failed = await log.until('failed');
    assert.deepEqual(scaler(failed, 'hello_world-httpserver'), {
      type: 'failed',
      message: `Could not satisfy spread picky for ${HTTP_PROVIDER}, 0/1 eligible hosts found.`,
    });
    // wadm 0.21.1 reports an unplaceable component as a conflict, not as "Could not satisfy spread".
    assert.deepEqual(scaler(failed, 'hello_world-http_component'), {
      type: 'failed',
      message: 'Spread requirement conflict: picky spread requires 1 instances vs 0 computed from reconciliation commands',
    });
    assert.deepEqual(sim.components(), []);
    assert.deepEqual(sim.providers(), []);
    t.diagnostic(`failed status: ${JSON.stringify(failed.status)}`);

    const mark = log.seen.length;
    const moon = await sim.addHost({ labels: { zone: 'moon' } });
    await log.until('deployed', mark);
    assert.deepEqual(
      sim.components().map((c) => c.hostId),
      [moon.id],
    );
    assert.deepEqual(
      sim.providers().map((p) => p.hostId),
      [moon.id],
    );
  });

  it('complex.yaml, whose spreads need region labels, fails on unlabelled hosts', async (t) => {
    const sim = await openLattice(t, 'complex', { hosts: [{}, {}] });
    const log = watch(t, 'complex', 'complex');
    await wadmApi('complex').putAndDeploy(manifest('complex.yaml'));

    const failed = await log.until('failed');
    assert.deepEqual(scaler(failed, 'fileserver'), {
      type: 'failed',
      message: 'Could not satisfy spread the-moon for ghcr.io/wasmcloud/blobstore-fs:0.6.0, 0/1 eligible hosts found.',
    });
    assert.deepEqual(scaler(failed, 'http_server'), {
      type: 'failed',
      message:
        `Could not satisfy spread westcoast for ${HTTP_PROVIDER}, 0/2 eligible hosts found. ` +
        `Could not satisfy spread the-moon for ${HTTP_PROVIDER}, 0/1 eligible hosts found.`,
    });
    assert.match(
      scaler(failed, 'littleblobbytables')?.message ?? '',
      /^Spread requirement conflict: (east|west)coast spread requires [23] instances/,
    );
    assert.deepEqual(sim.components(), []);
    assert.deepEqual(sim.providers(), []);
  });

  it('stopping the only host turns a deployed app to failed; a new host brings it back to deployed', async (t) => {
    const sim = await openLattice(t, 'stop');
    const log = watch(t, 'stop', 'hello-world');
    await wadmApi('stop').putAndDeploy(manifest('hello.yaml'));
    await log.until('deployed');

    const mark = log.seen.length;
    await sim.stopHost(sim.hosts[0]!.id);
    const failed = await log.until('failed', mark);
    assert.deepEqual(failed.status, {
      type: 'failed',
      message:
        'Spread requirement conflict: default spread requires 1 instances vs 0 computed from reconciliation commands, ' +
        `Could not satisfy spread default for ${HTTP_PROVIDER}, 0/1 eligible hosts found.`,
    });
    // The link is lattice data (a KV bucket on real hosts): it outlives the hosts.
    assert.equal(scaler(failed, 'hello_world-httpserver -(wasi:http)-> hello_world-http_component')?.type, 'deployed');
    assert.deepEqual((await wadmApi('stop').status('hello-world')).status, failed.status);
    t.diagnostic(`after host_stopped: ${JSON.stringify(failed.status)}`);

    const again = log.seen.length;
    const fresh = await sim.addHost();
    await log.until('deployed', again);
    assert.deepEqual(
      sim.components().map((c) => c.hostId),
      [fresh.id],
    );
  });

  it('undeploy stops the component and provider and removes the link and config', async (t) => {
    const sim = await openLattice(t, 'undeploy');
    const log = watch(t, 'undeploy', 'hello-world');
    const api = wadmApi('undeploy');
    await api.putAndDeploy(manifest('hello.yaml'));
    await log.until('deployed');
    const sent = sim.requests().length;

    await api.undeploy('hello-world');
    const undeployed = await log.until('undeployed');
    assert.deepEqual(undeployed, { status: { type: 'undeployed', message: 'Manifest has been undeployed' }, version: '', components: [] });
    await until(() => sim.events().some((e) => e.type === 'provider_stopped'), WADM_STALL_TOLERANT_MS);
    assert.deepEqual(commands(sim.requests().slice(sent)), ['component.scale', 'link.del', 'config.del', 'provider.stop']);
    assert.deepEqual([sim.components(), sim.providers(), sim.links(), sim.config()], [[], [], [], {}]);
    assert.equal(
      sim
        .events()
        .filter((e) => e.type === 'component_scaled')
        .at(-1)?.data['max_instances'],
      0,
    );
  });

  it('a host wadm holds that is not live is told to stop until wadm holds only the live ones (what a NATS restart needs)', async (t) => {
    const sim = await openLattice(t, 'ghost');
    const live = sim.hosts.map((h) => h.id);
    const ghost = nkeys.createServer().getPublicKey();
    // What wadm held after some NATS restarts: a host long gone, as its host_started left it.
    publishEvent(nc, 'ghost', {
      type: 'host_started',
      source: ghost,
      data: { friendly_name: 'ghost', labels: {}, uptime_seconds: 0, version: '1.9.2' },
    });
    await until(async () => (await heldHosts('ghost')).includes(ghost), WADM_STALL_TOLERANT_MS);

    await untilWadmHoldsOnly(nc, 'ghost', live);
    assert.deepEqual(await heldHosts('ghost'), live);
  });

  it('answers a missing config, a link to missing config and a request wadm never sends as a real host does', async (t) => {
    const sim = await openLattice(t, 'direct');
    const ctl = async (op: string, body?: Record<string, unknown>) =>
      json.decode(
        (await nc.request(`wasmbus.ctl.v1.direct.${op}`, body === undefined ? new Uint8Array() : json.encode(body), { timeout: 2000 }))
          .data,
      );
    assert.deepEqual(await ctl('config.get.nothing'), { success: true, message: 'Configuration not found' });
    const link = { source_id: 'a', target: 'b', wit_namespace: 'wasi', wit_package: 'http', interfaces: ['x'], source_config: ['nothing'] };
    assert.deepEqual(await ctl('link.put', link), {
      success: false,
      message: 'failed to validate link config: configuration nothing does not exist',
    });
    assert.deepEqual(await ctl(`component.update.${sim.hosts[0]!.id}`, {}), { success: false, message: 'unsupported subject' });
  });
});
