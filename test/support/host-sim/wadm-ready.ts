// Makes sure a real wadm hears a lattice before its hosts announce themselves. Two races in
// wadm 0.21.1 on nats-server 2.11 lose or stall events otherwise (both observed here, not guessed):
//
// 1. wadm's API answers before nats-server has set up the two sources (`wasmbus_events`,
//    `wadm_events`) of its `wadm_event_consumer` work-queue stream. Events and deploys published in
//    that window are often never sourced (11 of 12 fresh starts lost one of three messages sent at
//    once; none did after this wait); a lost `manifest_published` leaves the app with no scalers
//    and no status at all.
// 2. wadm creates a lattice's consumers when its observer first sees a host event, so that event
//    is already stored when the consumer's first pull (batch of 1) goes out. Now and then (3 of 40
//    fresh starts) the reply beats async-nats' bookkeeping of the pull and the consumer stalls for
//    ~35 s, until its idle-heartbeat check fires (0 of 70 with the cure below).
//
// The cure for 2 is to let the observer see a host event that JetStream refuses to store (an
// expected-stream header that cannot match), so the consumers exist, empty and pulling, first.
import { headers, JSONCodec, type JetStreamManager, type NatsConnection } from 'nats';
import { until } from '../wait.js';
import { publishEvent } from './events.js';

/**
 * How long a test waits for wadm to act on what a simulated host reports. The cure below makes the stall
 * rare, not impossible (once in ~600 CI lattices): wadm recovers by itself after ~35 s, so a test waits
 * longer than that rather than fail on a delay wadm does end.
 */
export const WADM_STALL_TOLERANT_MS = 90_000;

const EVENT_STREAM = 'wadm_event_consumer';
/** wadm's KV bucket; its `host_{lattice}` key maps each host id wadm knows to what it knows of it. */
const STATE_BUCKET = 'wadm_state';
const POLL_MS = 20;
/** Lets the client finish recording its first pull before the first real event arrives. */
const SETTLE_MS = 50;

export async function untilWadmWatches(nc: NatsConnection, lattice: string, timeoutMs = 10_000): Promise<void> {
  const jsm = await nc.jetstreamManager();
  const wait = { timeoutMs, intervalMs: POLL_MS };
  await until(() => sourcesActive(jsm), { ...wait, what: 'wadm: its event stream sources are active' });
  await until(
    () => {
      announceToObserverOnly(nc, lattice);
      return consumersPulling(jsm, lattice);
    },
    { ...wait, what: `wadm watches lattice ${lattice}` },
  );
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
}

/**
 * Resolves once wadm has taken in every event of the lattice published so far: its event stream has
 * sourced them all (a source's lag is what it has yet to copy), and its consumer holds none still to
 * deliver or to acknowledge. Waits through wadm's ~35 s stall, which it ends itself.
 */
export async function untilWadmTookEvents(nc: NatsConnection, lattice: string, timeoutMs = WADM_STALL_TOLERANT_MS): Promise<void> {
  // No API check: right after a NATS restart the connection may still be reconnecting; the polls retry.
  const jsm = await nc.jetstreamManager({ checkAPI: false });
  const sourced = () =>
    jsm.streams.info(EVENT_STREAM).then(
      (info) => (info.sources ?? []).every((s) => s.lag === 0),
      () => false,
    );
  await until(async () => (await sourced()) && (await wadmEventBacklog(jsm, lattice)) === 0, {
    timeoutMs,
    intervalMs: POLL_MS,
    what: `wadm took in lattice ${lattice}'s events`,
  });
}

/**
 * How many of the lattice's events wadm's consumer has yet to deliver or to see acknowledged: how
 * far wadm is behind the hosts. Undefined before wadm has a consumer for the lattice.
 */
export function wadmEventBacklog(jsm: JetStreamManager, lattice: string): Promise<number | undefined> {
  return jsm.consumers.info(EVENT_STREAM, `${EVENT_STREAM}-${lattice}`).then(
    (c) => c.num_pending + c.num_ack_pending,
    () => undefined,
  );
}

/**
 * Resolves once wadm's store holds no host but `live`. After a NATS restart wadm sometimes holds a host that
 * stopped long before (seen here after 6 of 11 restarts: a host of an earlier test, back with the empty inventory
 * of its first events, though wadm had taken in its `host_stopped`), and then commands it and counts it until its
 * reaper drops it ~70 s later. So each host wadm holds that is not live says `host_stopped` again, until wadm
 * holds none.
 */
export async function untilWadmHoldsOnly(nc: NatsConnection, lattice: string, live: string[]): Promise<void> {
  await until(
    async () => {
      await untilWadmTookEvents(nc, lattice);
      const gone = Object.entries(await wadmHeldHosts(nc, lattice)).filter(([id]) => !live.includes(id));
      for (const [id, { labels = {} }] of gone) publishEvent(nc, lattice, { type: 'host_stopped', source: id, data: { labels } });
      return gone.length === 0;
    },
    { timeoutMs: WADM_STALL_TOLERANT_MS, intervalMs: POLL_MS, what: `wadm holds no host of lattice ${lattice} but ${live.length} live` },
  );
}

/** The hosts wadm's store holds for a lattice, by id: what wadm last took in of each. */
export async function wadmHeldHosts(nc: NatsConnection, lattice: string): Promise<Record<string, { labels?: Record<string, string> }>> {
  const kv = await nc.jetstream().views.kv(STATE_BUCKET, { bindOnly: true });
  const entry = await kv.get(`host_${lattice}`);
  return entry && entry.operation === 'PUT' && entry.length > 0 ? entry.json() : {};
}

async function sourcesActive(jsm: JetStreamManager): Promise<boolean> {
  const sources = await jsm.streams.info(EVENT_STREAM).then(
    (info) => info.sources ?? [],
    () => [],
  );
  // `active` is the time since the source last moved, or -1 before it has been set up.
  return sources.length >= 2 && sources.every((s) => s.active >= 0);
}

function announceToObserverOnly(nc: NatsConnection, lattice: string): void {
  const h = headers();
  h.set('Nats-Expected-Stream', 'host-sim-not-a-stream');
  const type = 'com.wasmcloud.lattice.host_heartbeat'; // what the observer looks for in a payload
  nc.publish(
    `wasmbus.evt.${lattice}.host_heartbeat`,
    JSONCodec().encode({ specversion: '1.0', id: 'host-sim-opener', type, source: 'host-sim', data: {} }),
    { headers: h },
  );
}

async function consumersPulling(jsm: JetStreamManager, lattice: string): Promise<boolean> {
  const waiting = (stream: string, name: string) =>
    jsm.consumers.info(stream, name).then(
      (c) => c.num_waiting > 0,
      () => false,
    );
  return (await waiting(EVENT_STREAM, `${EVENT_STREAM}-${lattice}`)) && (await waiting('wadm_commands', `wadm_commands-${lattice}`));
}
