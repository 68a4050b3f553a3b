// The HostRegistry (src/lattice/hosts.ts) against a real nats-server, with host events published
// by the test as hosts publish them: what it keeps of a host, its bounds per lattice (hosts, labels,
// text), a poisoned event that must not stop the loop, the period two heartbeats tell, and a lattice
// nobody asks about being dropped. On the test clock: counted, never timed.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, JSONCodec, type NatsConnection } from 'nats';
import type { HostFacts, HostsView } from '../../src/core/lattice-hosts.js';
import { HostRegistry } from '../../src/lattice/hosts.js';
import { LATTICE_LIMITS } from '../../src/schema/lattice.js';
import { testClock } from '../support/clock.js';
import { jsonLogSink } from '../support/logs.js';
import { createLogger } from '../../src/plumbing/logger.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { until } from '../support/wait.js';

const json = JSONCodec();
const clock = testClock();
let nats: NatsServer;
let nc: NatsConnection;
let lattice = '';
let counter = 0;

before(async () => {
  nats = await startNatsServer();
  nc = await connect({ servers: nats.url });
});
after(async () => {
  await nc?.close();
  await nats?.dispose();
});
// A lattice of its own per test: what one test publishes never reaches another's registry.
beforeEach(() => void (lattice = `hosts-${++counter}`));

function registry(options: Partial<ConstructorParameters<typeof HostRegistry>[2]> = {}) {
  const { sink, lines } = jsonLogSink();
  const hosts = new HostRegistry(() => nc, createLogger('warn', sink), {
    now: clock.now,
    defaultPeriodMs: 30_000,
    idleMs: 15 * 60_000,
    retryFailedMs: 5 * 60_000,
    maxHostsPerLattice: 2000,
    maxLattices: 8,
    ...options,
  });
  return { hosts, lines };
}

function publish(type: string, source: string, data: unknown, time = '2026-11-30T12:00:00.250Z'): void {
  nc.publish(
    `wasmbus.evt.${lattice}.${type}`,
    json.encode({ specversion: '1.0', id: `${++counter}`, type: `com.wasmcloud.lattice.${type}`, source, time, data }),
  );
}

function heartbeat(source: string, fields: Record<string, unknown> = {}): void {
  publish('host_heartbeat', source, {
    friendly_name: `name-${source}`,
    labels: { zone: 'eu' },
    version: '1.9.2',
    uptime_human: '1m',
    uptime_seconds: 60,
    components: [{ id: 'c', annotations: { 'wasmcloud.dev/appspec': 'hello' } }],
    providers: [],
    ...fields,
  });
}

/** The view once `predicate` holds of it (the events travel through NATS first). */
async function heard(
  hosts: HostRegistry,
  predicate: (hosts: readonly HostFacts[]) => boolean,
): Promise<Extract<HostsView, { watching: true }>> {
  return until(
    () => {
      const view = hosts.view(lattice);
      return view.watching && predicate(view.hosts) ? view : undefined;
    },
    { what: 'the registry heard the events' },
  );
}

async function subscribed(hosts: HostRegistry): Promise<void> {
  hosts.view(lattice);
  await nc.flush();
}

describe('the hosts of a lattice, as their events tell them', () => {
  it("keeps what a heartbeat says, the heartbeat's own time, and what runs there", async () => {
    const { hosts } = registry();
    await subscribed(hosts);
    heartbeat('NA');
    const [host] = (await heard(hosts, (h) => h.length === 1)).hosts;
    assert.deepEqual(
      { ...host, heardAt: 0 },
      {
        id: 'NA',
        friendlyName: 'name-NA',
        labels: { zone: 'eu' },
        labelsOmitted: 0,
        version: '1.9.2',
        uptimeSeconds: 60,
        sentAt: '2026-11-30T12:00:00Z',
        heardAt: 0,
        periodMs: undefined,
        components: 1,
        providers: 0,
        applications: ['hello'],
      },
    );
  });

  it('learns the period from two heartbeats, not from a start announced before the first', async () => {
    const { hosts } = registry();
    await subscribed(hosts);
    publish('host_started', 'NB', { friendly_name: 'b', labels: {}, uptime_seconds: 0, version: '1.9.2' });
    await heard(hosts, (h) => h.length === 1);
    clock.advance(30_000);
    heartbeat('NB', { uptime_seconds: 30 });
    await heard(hosts, (h) => h[0]?.uptimeSeconds === 30);
    const once = hosts.view(lattice);
    assert.equal(once.watching && once.hosts[0]?.periodMs, undefined);
    clock.advance(10_000);
    heartbeat('NB', { uptime_seconds: 40 });
    const view = await heard(hosts, (h) => h[0]?.uptimeSeconds === 40);
    assert.equal(view.hosts[0]!.periodMs, 10_000);
  });

  it('forgets a host at its host_stopped at once', async () => {
    const { hosts } = registry();
    await subscribed(hosts);
    heartbeat('NC');
    heartbeat('ND');
    await heard(hosts, (h) => h.length === 2);
    publish('host_stopped', 'NC', { labels: {} });
    const view = await heard(hosts, (h) => h.length === 1);
    assert.equal(view.hosts[0]!.id, 'ND');
  });

  it('ignores a poisoned event with a warning, and goes on hearing the next ones', async () => {
    const { hosts, lines } = registry();
    await subscribed(hosts);
    nc.publish(`wasmbus.evt.${lattice}.host_heartbeat`, 'not json');
    heartbeat('NE', { version: 42 });
    heartbeat('NF');
    const view = await heard(hosts, (h) => h.length === 1);
    assert.equal(view.hosts[0]!.id, 'NF');
    await until(() => lines.filter((l) => l['msg'] === 'ignoring a malformed host event').length === 2, { what: 'two warnings' });
    assert.match(String(lines.find((l) => String(l['err']).includes('version'))?.['err']), /data\.version: must be a string/);
  });
});

describe('memory, bounded per lattice', () => {
  it('keeps at most maxHostsPerLattice hosts, and says more heartbeat', async () => {
    const { hosts } = registry({ maxHostsPerLattice: 3 });
    await subscribed(hosts);
    for (const id of ['N1', 'N2', 'N3', 'N4', 'N5']) heartbeat(id);
    await nc.flush();
    const view = await until(
      () => {
        const v = hosts.view(lattice);
        return v.watching && v.untracked ? v : undefined;
      },
      { what: 'the fourth host refused' },
    );
    assert.equal(view.hosts.length, 3);
  });

  it(`keeps ${LATTICE_LIMITS.labelsPerHost} labels of a host, by key, and cuts long text`, async () => {
    const { hosts } = registry();
    await subscribed(hosts);
    const labels = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`key-${String(i).padStart(2, '0')}`, 'v']));
    heartbeat('NL', { labels: { ...labels, 'key-00': 'x'.repeat(1000) }, friendly_name: 'y'.repeat(1000) });
    const [host] = (await heard(hosts, (h) => h.length === 1)).hosts;
    assert.equal(Object.keys(host!.labels).length, LATTICE_LIMITS.labelsPerHost);
    assert.equal(host!.labelsOmitted, 40 - LATTICE_LIMITS.labelsPerHost);
    assert.equal(Object.keys(host!.labels).at(-1), 'key-31');
    assert.equal(host!.labels['key-00']!.length, LATTICE_LIMITS.text);
    assert.equal(host!.friendlyName.length, LATTICE_LIMITS.text);
  });

  it('forgets a host silent for three periods, and a lattice nobody asked about for idleMs', async () => {
    const { hosts } = registry({ idleMs: 60_000 });
    await subscribed(hosts);
    heartbeat('NS');
    await heard(hosts, (h) => h.length === 1);
    clock.advance(3 * 30_000 + 1);
    const silent = hosts.view(lattice);
    assert.ok(silent.watching && silent.hosts.length === 0, 'the silent host is forgotten');
    clock.advance(60_000);
    assert.equal(hosts.counts().has(lattice), true, 'counts() is no use');
    hosts.view('another-lattice'); // a call about another lattice sweeps this one
    assert.equal(hosts.counts().has(lattice), false, 'unsubscribed and forgotten');
    assert.equal(hosts.peek(lattice), undefined, 'peeking subscribes nothing');
  });
});
