// What a replica's readiness means (wiring/readiness.ts): "I can answer hooks truthfully, or no
// replica can". The rule on an injected clock, and the peers asked over real HTTP.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readiness, replicaReadiness, type ReplicaView } from '../../src/wiring/readiness.js';
import { createLogger } from '../../src/plumbing/logger.js';
import { testClock } from '../support/clock.js';
import { until } from '../support/wait.js';

const view = (change: Partial<ReplicaView>): ReplicaView => ({
  stopping: false,
  connected: false,
  disconnectedAt: 0,
  peerConnectedAt: undefined,
  now: 0,
  graceMs: 30_000,
  peerWordMs: 6_000,
  ...change,
});

describe('readiness, the rule', () => {
  it('is ready and answers while connected to NATS', () => {
    assert.deepEqual(readiness(view({ connected: true })), { ready: true, answersHooks: true });
  });

  it('leaves hooks to the peers during the grace after NATS went away: not ready, calls refused', () => {
    const state = readiness(view({ now: 29_999 }));
    assert.equal(state.ready, false);
    assert.equal(state.answersHooks, false);
    assert.match(state.reason!, /not connected to NATS for 30 s \(grace 30 s\)/);
    assert.equal(state.peerAnswers, undefined, 'no peer heard from');
    assert.equal(readiness(view({ now: 10_000, peerConnectedAt: 8_000 })).peerAnswers, true, 'a peer said lately it is connected');
  });

  it('after the grace, stays out while a peer said lately that it is connected', () => {
    assert.equal(readiness(view({ now: 40_000, peerConnectedAt: 35_000 })).ready, false);
    assert.equal(readiness(view({ now: 40_000, peerConnectedAt: 35_000 })).answersHooks, false);
    assert.equal(readiness(view({ now: 40_000, peerConnectedAt: 35_000 })).peerAnswers, true);
  });

  it('after the grace, with no peer connected (or none heard lately), is ready and answers the outage', () => {
    for (const peerConnectedAt of [undefined, 30_000]) {
      const state = readiness(view({ now: 40_000, peerConnectedAt }));
      assert.deepEqual([state.ready, state.answersHooks], [true, true], `peer heard at ${peerConnectedAt}`);
      assert.match(state.reason!, /nor is any peer: answering LatticeUnavailable/);
    }
  });

  it('is not ready but still answers the calls that come while it shuts down', () => {
    assert.deepEqual(readiness(view({ stopping: true, connected: true })), { ready: false, answersHooks: true, reason: 'shutting down' });
  });
});

describe('readiness, asking the peers', () => {
  it('asks every peer at /natsz while cut off, and stays out while one is connected', async (t) => {
    let peerConnected = true;
    const peer = createServer((req, res) => {
      res.writeHead(req.url === '/natsz' && peerConnected ? 200 : 503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ connected: req.url === '/natsz' && peerConnected }));
    });
    await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve));
    t.after(() => peer.close());
    const clock = testClock(0);
    const listeners: ((connected: boolean) => void)[] = [];
    const replica = replicaReadiness({
      graceMs: 1000,
      peers: [`localhost:${(peer.address() as AddressInfo).port}`],
      tls: false,
      now: clock.now,
      isConnected: () => false,
      onStateChange: (listener) => void listeners.push(listener),
      logger: createLogger('silent'),
      peerCheckMs: 20,
    });
    t.after(() => replica.stop());
    clock.advance(2000);
    await until(() => replica.state().reason?.includes('a peer is') === true, { what: 'the peer heard' });
    assert.equal(replica.state().ready, false);
    peerConnected = false;
    clock.advance(10_000); // the peer's word is old now, and it says no more
    await until(() => replica.state().ready, { what: 'ready once no peer is connected' });
    assert.match(replica.state().reason!, /nor is any peer/);
  });
});
