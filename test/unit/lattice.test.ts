// The WasmCloudLattice's core: from (the hook call, what is known of the lattice) to its status,
// without NATS or wadm. Hosts, their heartbeats and the clock are facts handed in.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decideLattice, latticeTargetOf, type LatticeCall, type ListedApplication, type WadmView } from '../../src/core/lattice.js';
import { MISSED_PERIODS, type HostFacts, type HostsView } from '../../src/core/lattice-hosts.js';
import { LATTICE_REASONS } from '../../src/core/lattice-reasons.js';
import { defaultOnly, fromPolicy } from '../../src/core/tenancy.js';
import { compile } from '../../src/schema/validator.js';
import { LATTICE_LIMITS, WasmCloudLatticeStatusSchema, type WasmCloudLatticeStatus } from '../../src/schema/lattice.js';

const PERIOD = 30_000;
const T0 = Date.parse('2026-03-01T12:00:00Z');
const checkStatus = compile<WasmCloudLatticeStatus>(WasmCloudLatticeStatusSchema);

function host(n: number, fields: Partial<HostFacts> = {}): HostFacts {
  return {
    id: `N${String(n).padStart(55, 'A')}`,
    friendlyName: `host-${String(n).padStart(3, '0')}`,
    labels: { 'hostcore.os': 'linux', zone: n % 2 === 0 ? 'eu' : 'us' },
    labelsOmitted: 0,
    version: '1.9.2',
    uptimeSeconds: 120,
    sentAt: '2026-03-01T12:00:00Z',
    heardAt: T0,
    periodMs: PERIOD,
    components: 1,
    providers: 1,
    applications: ['hello'],
    ...fields,
  };
}

function heard(hosts: HostFacts[], since = T0 - 10 * PERIOD): HostsView {
  return { watching: true, since, hosts, untracked: false, defaultPeriodMs: PERIOD };
}

function listed(models: ListedApplication[], owners: Record<string, string | null> = {}): WadmView {
  return { kind: 'listed', total: models.length, models, owners: new Map(Object.entries(owners)) };
}

const hello: ListedApplication = { name: 'hello', version: 'v2', deployed: 'v2', status: 'deployed' };
const stray: ListedApplication = {
  name: 'washed',
  version: 'v1',
  deployed: null,
  status: 'undeployed',
  message: 'Manifest has been undeployed',
};

function call(fields: Partial<LatticeCall> & { spec?: unknown; name?: string } = {}): LatticeCall {
  const { spec, name = 'default', ...rest } = fields;
  return { target: latticeTargetOf(name, spec), generation: 1, namespaces: ['*'], previousStatus: undefined, now: T0 + 1000, ...rest };
}

const ready = (status: WasmCloudLatticeStatus) => status.conditions?.find((c) => c.type === 'Ready');

describe('a lattice with hosts and applications', () => {
  it('is Ready with its hosts, labels, applications and owners, and a status the CRD schema takes', () => {
    const { status, resyncAfterSeconds } = decideLattice(
      call(),
      heard([host(2), host(1)]),
      listed([stray, hello], { hello: 'team-a/hello', washed: null }),
    );
    assert.ok(checkStatus(status), checkStatus.problems(status, 'status').join('; '));
    assert.equal(ready(status)?.status, 'True');
    assert.equal(ready(status)?.reason, 'LatticeReady');
    assert.equal(status.message, '2 hosts heartbeating, 2 applications; wadm answers');
    assert.equal(status.hostCount, 2);
    assert.deepEqual(
      status.hosts!.map((h) => h.friendlyName),
      ['host-001', 'host-002'],
    );
    assert.deepEqual(status.hosts![0], {
      id: host(1).id,
      friendlyName: 'host-001',
      labels: { 'hostcore.os': 'linux', zone: 'us' },
      version: '1.9.2',
      uptimeSeconds: 120,
      lastHeartbeat: '2026-03-01T12:00:00Z',
      components: 1,
      providers: 1,
    });
    assert.deepEqual(status.hostLabels, [
      { key: 'hostcore.os', values: ['linux'], hosts: 2 },
      { key: 'zone', values: ['eu', 'us'], hosts: 2 },
    ]);
    assert.deepEqual(status.applications, [
      { name: 'hello', version: 'v2', deployedVersion: 'v2', status: 'Deployed', owner: 'team-a/hello', hosts: 2 },
      { name: 'washed', version: 'v1', status: 'Undeployed', message: 'Manifest has been undeployed', unowned: true, hosts: 0 },
    ]);
    assert.equal(status.applicationsFrom, 'Wadm');
    assert.equal(status.wadmReachable, true);
    assert.deepEqual(status.namespaces, ['*']);
    assert.equal(resyncAfterSeconds, Math.ceil((MISSED_PERIODS * PERIOD - 1000) / 1000) + 1, 'looks again as the first host would be lost');
  });

  it('answers byte for byte the same for the same call and knowledge, and keeps transition times', () => {
    const views = [heard([host(1)]), listed([hello])] as const;
    const first = decideLattice(call(), ...views);
    assert.equal(JSON.stringify(decideLattice(call(), ...views)), JSON.stringify(first));
    const later = decideLattice(call({ now: T0 + 5000, previousStatus: first.status }), ...views);
    assert.equal(ready(later.status)?.lastTransitionTime, ready(first.status)?.lastTransitionTime);
  });

  it('shows at most 50 hosts and 50 applications, and says how many it leaves out', () => {
    const hosts = Array.from({ length: 120 }, (_, i) => host(i));
    const models = Array.from({ length: 200 }, (_, i) => ({ name: `app-${String(i).padStart(3, '0')}`, version: 'v1', deployed: 'v1' }));
    const { status } = decideLattice(call(), heard(hosts), listed(models));
    assert.equal(status.hostCount, 120);
    assert.equal(status.hosts!.length, 50);
    assert.equal(status.hostsOmitted, 70);
    assert.equal(status.applicationCount, 200);
    assert.equal(status.applications!.length, 50);
    assert.equal(status.applicationsOmitted, 150);
    assert.equal(status.applications![0]!.name, 'app-000');
    assert.ok(Buffer.byteLength(JSON.stringify(status)) < 64 * 1024, 'far below an etcd value');
  });
});

describe('the size of a status', () => {
  it('stays within what etcd stores (1.5 MiB) with every list at its bound and every text at its longest', () => {
    const long = (c: string) => c.repeat(LATTICE_LIMITS.text);
    const labels = Object.fromEntries(
      Array.from({ length: LATTICE_LIMITS.labelsPerHost }, (_, i) => [`${i}${long('k')}`.slice(0, LATTICE_LIMITS.text), long('v')]),
    );
    const hosts = Array.from({ length: 2000 }, (_, i) =>
      host(i, {
        id: `${i}${long('N')}`.slice(0, LATTICE_LIMITS.text),
        friendlyName: `${i}${long('f')}`.slice(0, LATTICE_LIMITS.text),
        labels,
        version: long('1'),
      }),
    );
    const models = Array.from({ length: 5000 }, (_, i) => ({
      name: `${i}${long('a')}`.slice(0, LATTICE_LIMITS.text),
      version: long('v'),
      deployed: long('d'),
      status: 'failed',
      message: long('m'),
    }));
    const owners = new Map(models.map((m) => [m.name, long('o')]));
    const namespaces = Array.from({ length: 200 }, (_, i) => `${i}${long('n')}`.slice(0, 63));
    const { status } = decideLattice(call({ namespaces }), heard(hosts), { kind: 'listed', total: models.length, models, owners });
    const bytes = Buffer.byteLength(JSON.stringify(status));
    assert.ok(bytes < 1.5 * 1024 * 1024, `${bytes} bytes`);
  });
});

describe('hosts joining and leaving', () => {
  it('drops a host that missed its heartbeat for one and a half periods, and not before', () => {
    const late = host(2, { heardAt: T0 - PERIOD });
    const justBefore = decideLattice(call({ now: T0 - PERIOD + MISSED_PERIODS * PERIOD - 1 }), heard([host(1), late]), listed([]));
    assert.equal(justBefore.status.hostCount, 2);
    const after = decideLattice(call({ now: T0 - PERIOD + MISSED_PERIODS * PERIOD }), heard([host(1), late]), listed([]));
    assert.equal(after.status.hostCount, 1);
  });

  it('shows a silent host gone within two heartbeat periods when the hook is called as it asks (resyncAfterSeconds)', () => {
    // Two hosts beat every period, offset by a third of it; host 2 dies right after a heartbeat.
    const beats = (n: number, offset: number, until: number) => (now: number) => {
      const last = Math.floor((Math.min(now, until) - offset) / PERIOD) * PERIOD + offset;
      return host(n, { heardAt: last });
    };
    const one = beats(1, 0, Infinity);
    const diesAt = T0 + 3 * PERIOD + PERIOD / 3;
    const two = beats(2, PERIOD / 3, diesAt);
    let now = T0 + 3 * PERIOD;
    let goneAt: number | undefined;
    for (let calls = 0; calls < 20 && goneAt === undefined; calls++) {
      const { status, resyncAfterSeconds } = decideLattice(call({ now }), heard([one(now), two(now)]), listed([]));
      if (status.hostCount === 1) goneAt = now;
      assert.ok(resyncAfterSeconds !== undefined && resyncAfterSeconds >= 1, 'a lattice with hosts is always looked at again');
      now += resyncAfterSeconds * 1000;
    }
    assert.ok(goneAt !== undefined, 'the silent host went');
    assert.ok(goneAt - diesAt <= 2 * PERIOD, `gone ${goneAt - diesAt} ms after its last heartbeat`);
  });

  it('says it is still listening during the first heartbeat period while what Ready needs is not heard yet, and looks again when it ends', () => {
    const since = T0;
    const { status, resyncAfterSeconds } = decideLattice(
      call({ now: T0 + 10_000, spec: { minHosts: 2 } }),
      heard([host(1)], since),
      listed([]),
    );
    assert.equal(ready(status)?.reason, 'ListeningForHosts');
    assert.equal(ready(status)?.status, 'False');
    assert.equal(status.conditions?.find((c) => c.type === 'Reconciling')?.status, 'True');
    assert.equal(
      status.message,
      'Listening to the heartbeats of lattice "default" until 2026-03-01T12:00:30Z: 1 host heartbeating so far; 2 hosts needed (spec.minHosts)',
    );
    assert.equal(resyncAfterSeconds, 21);
  });

  it('is Ready within that period once the hosts heard give what it needs, saying more may yet be heard', () => {
    const { status, resyncAfterSeconds } = decideLattice(call({ now: T0 + 10_000 }), heard([host(1)], T0), listed([]));
    assert.equal(ready(status)?.reason, 'LatticeReady');
    assert.equal(
      status.message,
      '1 host heartbeating (listening until 2026-03-01T12:00:30Z: more may yet be heard), 0 applications; wadm answers',
    );
    assert.equal(resyncAfterSeconds, 21, 'looks again as the listening ends, before the host would be lost');
  });
});

describe('what Ready needs', () => {
  it('at least one host without spec.minHosts; none with minHosts 0', () => {
    const none = decideLattice(call(), heard([]), listed([]));
    assert.equal(ready(none.status)?.reason, 'HostsMissing');
    assert.match(none.status.message!, /^1 host needed \(spec.minHosts default\); 0 hosts heartbeating$/);
    assert.equal(none.resyncAfterSeconds, undefined, 'resyncPeriodSeconds looks again');
    const zero = decideLattice(call({ spec: { minHosts: 0 } }), heard([]), listed([]));
    assert.equal(ready(zero.status)?.status, 'True');
  });

  it('hosts with the labels spec.requiredHosts names, and says what the hosts have instead', () => {
    const spec = { requiredHosts: [{ labels: { zone: 'eu' } }, { labels: { zone: 'ap', tier: 'gpu' }, count: 2 }] };
    const { status } = decideLattice(call({ spec }), heard([host(1), host(2), host(3)]), listed([]));
    assert.equal(ready(status)?.reason, 'HostsMissing');
    assert.equal(
      status.message,
      'spec.requiredHosts[1] needs 2 hosts with tier=gpu, zone=ap, 0 heartbeat (the hosts have hostcore.os=linux (3 hosts), zone=eu (1 host), zone=us (2 hosts)); 3 hosts heartbeating',
    );
  });
});

describe('when something cannot be known', () => {
  it('wadm not answering: Ready Unknown, the hosts still shown, a short resync', () => {
    const wadm: WadmView = { kind: 'unavailable', reason: 'NoResponders', message: 'no wadm is listening on wadm.api.default.model.get' };
    const { status, resyncAfterSeconds } = decideLattice(call(), heard([host(1)]), wadm);
    assert.equal(ready(status)?.status, 'Unknown');
    assert.equal(ready(status)?.reason, 'WadmUnavailable');
    assert.equal(status.hostCount, 1);
    assert.equal(status.applicationCount, undefined, 'no application count is made up');
    assert.equal(status.wadmReachable, undefined);
    assert.equal(resyncAfterSeconds, 10);
  });

  it("a list too large for one NATS message: the applications the hosts' heartbeats name, wadm probed reachable", () => {
    const wadm: WadmView = { kind: 'unlisted', reason: 'Timeout', message: 'timed out', tooLarge: true, reachable: true };
    const { status } = decideLattice(call(), heard([host(1, { applications: ['a', 'b'] }), host(2, { applications: ['b'] })]), wadm);
    assert.equal(ready(status)?.status, 'True');
    assert.equal(status.applicationsFrom, 'Heartbeats');
    assert.equal(status.applicationCount, 2);
    assert.deepEqual(status.applications, [
      { name: 'a', hosts: 1 },
      { name: 'b', hosts: 2 },
    ]);
    assert.equal(status.wadmReachable, true);
  });

  it('NATS refusing the heartbeat subjects: Stalled, with what to grant', () => {
    const hosts: HostsView = { watching: false, why: 'refused', message: 'grant it subscribe on "wasmbus.evt.default.host_heartbeat"' };
    const { status } = decideLattice(call(), hosts, listed([]));
    assert.equal(ready(status)?.reason, 'NatsNotPermitted');
    assert.equal(status.conditions?.find((c) => c.type === 'Stalled')?.status, 'True');
    assert.match(status.message!, /grant it subscribe on "wasmbus\.evt\.default\.host_heartbeat"/);
  });

  it('an invalid spec: Stalled, nothing asked', () => {
    const { status } = decideLattice(call({ spec: { lattice: 'a.b' } }), heard([]), listed([]));
    assert.equal(ready(status)?.reason, 'InvalidLatticeSpec');
    assert.equal(status.hostCount, undefined);
    assert.match(status.message!, /spec.lattice: may contain only letters/);
  });

  it('names the lattice by spec.lattice when set, else by the resource name', () => {
    assert.deepEqual(latticeTargetOf('prod', {}), { ok: true, lattice: 'prod', spec: {} });
    assert.deepEqual(latticeTargetOf('prod', undefined), { ok: true, lattice: 'prod', spec: {} });
    assert.equal((latticeTargetOf('prod', { lattice: 'Prod_EU' }) as { lattice: string }).lattice, 'Prod_EU');
  });
});

describe('the reasons of a lattice', () => {
  it('share no name with the reasons of an application', async () => {
    const { REASONS } = await import('../../src/core/reasons.js');
    for (const reason of Object.keys(LATTICE_REASONS)) assert.ok(!(reason in REASONS), reason);
  });
});

describe('the namespaces a lattice policy lets in', () => {
  it('are every namespace for the default lattice without a policy, none for another', () => {
    assert.deepEqual(defaultOnly('default').namespacesFor?.('default'), ['*']);
    assert.deepEqual(defaultOnly('default').namespacesFor?.('other'), []);
  });

  it('are the patterns of the rules that grant it, literally, by `*` or as `{namespace}`', () => {
    const tenancy = fromPolicy(
      {
        rules: [
          { namespaces: ['team-a', 'team-b'], lattices: ['shared'] },
          { namespaces: ['ops-*'], lattices: ['*'] },
          { namespaces: ['tenant-*'], lattices: ['{namespace}'] },
        ],
      },
      'default',
    );
    assert.deepEqual(tenancy.namespacesFor?.('shared'), ['ops-*', 'team-a', 'team-b']);
    assert.deepEqual(tenancy.namespacesFor?.('tenant-x'), ['ops-*', 'tenant-x']);
    assert.deepEqual(tenancy.namespacesFor?.('Tenant_X'), ['ops-*'], 'no namespace is named with capitals');
  });
});
