// A lattice of 4,000 applications with long names, filled straight over wadm's API: more than wadm
// can list (its list is one NATS message, and past max_payload wadm cannot send it). Before issue
// 27 every first put read that list, timed out, and the lattice took no new application. Here a
// new application's first sync is counted on the wire (the relay in front of the real wadm) and
// compared with the same in a lattice of 10: the same requests, never a list, and its time moves
// with wadm's own put, not with the lattice.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, headers, type NatsConnection } from 'nats';
import { list } from '../../src/cli/lattice-views.js';
import { loadConfig } from '../../src/plumbing/config.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { wasmApp, hookRequest } from '../support/resources.js';
import { CleanupStack, startService, type RunningService } from '../support/service.js';
import { startRelayedWadm, type RelayedRequest, type WadmRelay } from '../support/wadm-relay.js';

const BUSY = 'busy-lattice';
const SMALL = 'small-lattice';
const MODELS = 4000;
/** Long names: 4,000 of them make a list reply of well over 1 MiB (and an index of ~500 KB, which wadm can store). */
const nameOf = (i: number) => `imported-${String(i).padStart(5, '0')}-`.padEnd(120, 'x');
const ROUNDS = 7;

let nats: NatsServer;
let wadm: WadmRelay;
let running: RunningService;
let nc: NatsConnection;
const cleanups = new CleanupStack();

before(async () => {
  nats = await startNatsServer();
  wadm = await startRelayedWadm(nats.url);
  await fill(BUSY, MODELS);
  await fill(SMALL, 10);
  running = await startService(cleanups, { NATS_URL: nats.url });
  await running.connected();
  nc = await connect({ servers: nats.url });
});
after(async () => {
  await cleanups.run();
  await nc?.close();
  await wadm?.stop();
  await nats?.dispose();
});

/** Puts `count` models straight to the real wadm, 16 at a time (wadm retries its own index conflicts; so do we). */
async function fill(lattice: string, count: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const manifest = {
        apiVersion: 'core.oam.dev/v1beta1',
        kind: 'Application',
        metadata: { name: nameOf(i), annotations: { version: 'v1' } },
        spec: { components: [] },
      };
      for (let attempt = 0; ; attempt++) {
        const reply = await wadm.direct(lattice, 'put', JSON.stringify(manifest), 30_000);
        if (reply.result === 'created' || reply.result === 'newversion' || /already exists/.test(reply.message ?? '')) break;
        if (attempt > 10) throw new Error(`put ${i} in ${lattice}: ${JSON.stringify(reply)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

interface FirstSync {
  ms: number;
  requests: string[];
  version: string | undefined;
  deployed: string | undefined;
}

/** One new application's first sync through the hook: its time and the wadm requests it sent. */
async function firstSync(lattice: string, name: string): Promise<FirstSync> {
  const parent = wasmApp().inLattice(lattice).named(name).inNamespace('importers').unannotated().build();
  const before = wadm.requests.length;
  const started = performance.now();
  const response = await fetch(`${running.url}/sync`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(hookRequest(parent)),
  });
  const ms = performance.now() - started;
  const { status } = (await response.json()) as { status: { version?: string; deployedVersion?: string } };
  return { ms, requests: wadm.requests.slice(before).map(said), version: status.version, deployed: status.deployedVersion };
}

/** The same, straight to wadm (through the relay, as the hook's requests go): versions, put, deploy. */
async function direct(lattice: string, name: string): Promise<number> {
  const h = headers();
  h.set('Content-Type', 'application/json');
  const manifest = {
    apiVersion: 'core.oam.dev/v1beta1',
    kind: 'Application',
    metadata: { name, annotations: { version: 'v1' } },
    spec: wasmApp().build().spec,
  };
  const started = performance.now();
  await nc.request(`wadm.api.${lattice}.model.versions.${name}`, '', { timeout: 30_000 });
  await nc.request(`wadm.api.${lattice}.model.put`, JSON.stringify(manifest), { timeout: 30_000, headers: h });
  await nc.request(`wadm.api.${lattice}.model.deploy.${name}`, JSON.stringify({ version: 'v1' }), { timeout: 30_000 });
  return performance.now() - started;
}

/** A request as the relay saw it: operation, lattice and name (none for a put or a list). */
const said = (r: RelayedRequest) => `${r.op} ${r.lattice}${r.name === undefined ? '' : ` ${r.name}`}`;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

describe(`a lattice of ${MODELS} applications`, () => {
  it('is more than wadm can list: its list is never answered, as a lattice this size sees it', async () => {
    const small = await wadm.direct(SMALL, 'get', '', 5_000);
    assert.equal((small['models'] as unknown[]).length, 10);
    await assert.rejects(wadm.direct(BUSY, 'get', '', 5_000), /TIMEOUT/, 'wadm cannot send a list past max_payload');
  });

  it("takes new applications with the same few requests as a lattice of 10, none a list, in a time that moves with wadm's own put", async () => {
    const ours: Record<string, number[]> = { [SMALL]: [], [BUSY]: [] };
    const straight: Record<string, number[]> = { [SMALL]: [], [BUSY]: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const lattice of [SMALL, BUSY]) {
        const sync = await firstSync(lattice, `new-${round}`);
        assert.ok(sync.version && sync.deployed === sync.version, `${lattice} round ${round}: ${JSON.stringify(sync)}`);
        const model = await wadm.model(lattice, `new-${round}`);
        assert.equal(model?.deployed, sync.version, 'deployed in wadm');
        // The lattice's own key read, its index key read through lattice "busy" or "small" (the
        // first time only: once it holds an index it always will), the put and the deploy.
        const prefix = lattice.split('-')[0]!;
        const expected = [
          `versions ${lattice} new-${round}`,
          ...(round === 0 ? [`versions ${prefix} lattice`] : []),
          `put ${lattice}`,
          `deploy ${lattice} new-${round}`,
        ];
        assert.deepEqual(sync.requests, expected, `${lattice} round ${round}`);
        ours[lattice]!.push(sync.ms);
        straight[lattice]!.push(await direct(lattice, `direct-${round}`));
      }
    }
    // A time ratio, not a time: how much slower a first sync is in the busy lattice than in the small
    // one, beside the same ratio for a client that sends the three requests itself. wadm's put
    // rewrites the lattice's index, so both grow a little; ours must not grow more than wadm's own
    // work does (a list read would make it seconds: a timeout).
    const ratio = median(ours[BUSY]!) / median(ours[SMALL]!);
    const anchor = median(straight[BUSY]!) / median(straight[SMALL]!);
    console.log(
      `first sync, median of ${ROUNDS}: ${median(ours[SMALL]!).toFixed(1)} ms with 10 applications, ${median(ours[BUSY]!).toFixed(1)} ms with ${MODELS} (${ratio.toFixed(2)}x); straight to wadm ${anchor.toFixed(2)}x`,
    );
    assert.ok(ratio <= 2 * anchor + 0.5, `busy/small ${ratio.toFixed(2)}x against wadm's own ${anchor.toFixed(2)}x`);
  });

  it('is listed by `list` with a clear word on the limit, not a bare timeout', async () => {
    const loaded = loadConfig({ NATS_URL: nats.url, WADM_TIMEOUT_MS: '3000' });
    assert.ok(loaded.ok);
    const outcome = await list(BUSY, loaded.config);
    assert.equal(outcome.code, 2);
    assert.match(
      outcome.stderr,
      /wadm answers it in one NATS message, which it cannot send once the lattice holds more applications than fit in the NATS server's max_payload/,
    );
    assert.match(outcome.stderr, /wasmcloud-metacontroller status NAME --lattice busy-lattice/);
  });
});
