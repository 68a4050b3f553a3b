// The WasmCloudLattice's hook over HTTP (src/server.ts, /lattice/sync), with what it knows of the
// lattice handed in: the answer Metacontroller decodes, its ETag, refusals, and its metrics.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { HostFacts, HostsView } from '../../src/core/lattice-hosts.js';
import type { WadmView } from '../../src/core/lattice.js';
import { LATTICE_HOOK_PATH } from '../../src/server.js';
import { build } from '../support/http.js';
import { TEST_EPOCH } from '../support/clock.js';

const host: HostFacts = {
  id: 'NA',
  friendlyName: 'host-a',
  labels: { zone: 'eu' },
  labelsOmitted: 0,
  version: '1.9.2',
  uptimeSeconds: 10,
  sentAt: '2026-11-30T11:59:59Z',
  heardAt: TEST_EPOCH - 1000,
  periodMs: 30_000,
  components: 0,
  providers: 0,
  applications: [],
};
const latticeViews = {
  hosts: {
    view: (): HostsView => ({ watching: true, since: TEST_EPOCH - 600_000, hosts: [host], untracked: false, defaultPeriodMs: 30_000 }),
  },
  listings: { view: async (): Promise<WadmView> => ({ kind: 'listed', total: 0, models: [], owners: new Map() }) },
};

const parent = (name = 'default', spec?: unknown) => ({
  apiVersion: 'core.wasmcloud.com/v1beta1',
  kind: 'WasmCloudLattice',
  metadata: { name, uid: 'u-1', resourceVersion: '7', generation: 2, annotations: { 'example.com/x': 'y' } },
  ...(spec === undefined ? {} : { spec }),
});
const body = (p: unknown) => ({ controller: { spec: {} }, parent: p, children: {}, related: {}, finalizing: false });

describe('POST /lattice/sync', () => {
  it('answers a status and no children, Ready from what is known of the lattice', async (t) => {
    const { app } = build(t, { latticeViews });
    const res = await app.inject({ method: 'POST', url: LATTICE_HOOK_PATH, payload: body(parent()) });
    assert.equal(res.statusCode, 200);
    assert.match(res.headers['content-type'] as string, /^application\/json/);
    const answer = res.json();
    assert.deepEqual(Object.keys(answer).sort(), ['children', 'resyncAfterSeconds', 'status']);
    assert.deepEqual(answer.children, []);
    assert.equal(answer.status.lattice, 'default');
    assert.equal(answer.status.observedGeneration, 2);
    assert.equal(answer.status.conditions[0].reason, 'LatticeReady');
    assert.equal(answer.status.hostCount, 1);
  });

  it('gives the same bytes for the same call, and a bodyless 304 to an If-None-Match of them', async (t) => {
    const { app } = build(t, { latticeViews });
    const first = await app.inject({ method: 'POST', url: LATTICE_HOOK_PATH, payload: body(parent()) });
    const second = await app.inject({ method: 'POST', url: LATTICE_HOOK_PATH, payload: body(parent()) });
    assert.equal(second.body, first.body);
    const cached = await app.inject({
      method: 'POST',
      url: LATTICE_HOOK_PATH,
      payload: body(parent()),
      headers: { 'if-none-match': first.headers['etag'] as string },
    });
    assert.equal(cached.statusCode, 304);
    assert.equal(cached.body, '');
  });

  it('says the lattice is unknown without NATS, and counts each call by hook and code', async (t) => {
    const { app, metrics } = build(t);
    const res = await app.inject({ method: 'POST', url: LATTICE_HOOK_PATH, payload: body(parent()) });
    assert.equal(res.json().status.conditions[0].reason, 'WadmUnavailable');
    const calls = (await metrics.hookRequests.get()).values.find((v) => v.labels['hook'] === 'lattice');
    assert.deepEqual([calls?.labels['code'], calls?.value], ['200', 1]);
  });

  it('refuses what is not a hook call (400), and any other method (405)', async (t) => {
    const { app } = build(t, { latticeViews });
    const bad = await app.inject({ method: 'POST', url: LATTICE_HOOK_PATH, payload: body({ metadata: {} }) });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().message, /body\.parent\.metadata\.name: is required/);
    const get = await app.inject({ method: 'GET', url: LATTICE_HOOK_PATH });
    assert.equal(get.statusCode, 405);
    assert.equal(get.headers['allow'], 'POST');
  });

  it('reports an invalid spec in the status (Stalled), not as an HTTP error', async (t) => {
    const { app } = build(t, { latticeViews });
    const res = await app.inject({ method: 'POST', url: LATTICE_HOOK_PATH, payload: body(parent('default', { minHosts: -1 })) });
    assert.equal(res.statusCode, 200);
    const { conditions } = res.json().status;
    assert.equal(conditions[0].reason, 'InvalidLatticeSpec');
    assert.equal(conditions[1].type, 'Stalled');
  });
});
