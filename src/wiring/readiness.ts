// What /readyz and the hook gate say, from the state of this replica's NATS connection and of its
// peers'. Readiness means "this replica can answer hooks truthfully, or no replica can":
//   - connected to NATS: ready, hooks answered;
//   - cut off from NATS for less than NATS_OUTAGE_GRACE, or while a peer reports it is connected:
//     not ready, and a hook call that still arrives is refused 429 with Retry-After, which
//     Metacontroller honours without counting it as a failure (the status stays as it is; the
//     Service sends the next call to a peer that can answer);
//   - cut off for longer, and no peer connected: ready again, so that Metacontroller's calls reach
//     it and every status says LatticeUnavailable (every replica then answers the same).
// Peers are the other replicas (PEERS: the Deployment's headless Service), asked over HTTP at
// /natsz. A peer that cannot be asked counts as not connected.
import { lookup } from 'node:dns/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Logger } from 'pino';

export interface ReadinessState {
  /** What /readyz answers: 200 or 503. */
  ready: boolean;
  /** Whether hook calls are answered, or refused 429 with Retry-After (http/hook-gate.ts). */
  answersHooks: boolean;
  /** Why not, when not. */
  reason?: string;
  /** Refusing hooks while a peer said lately it is connected: a call on a new connection can reach it. */
  peerAnswers?: boolean;
}

export interface ReplicaView {
  stopping: boolean;
  connected: boolean;
  /** Since when this replica has had no NATS connection (its start, if it never had one). */
  disconnectedAt: number;
  /** When a peer last said it is connected to NATS; undefined: never. */
  peerConnectedAt: number | undefined;
  now: number;
  graceMs: number;
  /** How long a peer's word counts. */
  peerWordMs: number;
}

/** The rule itself: pure, on the clock it is given. */
export function readiness(view: ReplicaView): ReadinessState {
  if (view.stopping) return { ready: false, answersHooks: true, reason: 'shutting down' };
  if (view.connected) return { ready: true, answersHooks: true };
  const downMs = view.now - view.disconnectedAt;
  const seconds = Math.round(downMs / 1000);
  const peerAnswers = view.peerConnectedAt !== undefined && view.now - view.peerConnectedAt < view.peerWordMs;
  if (downMs < view.graceMs) {
    const reason = `not connected to NATS for ${seconds} s (grace ${view.graceMs / 1000} s)`;
    return peerAnswers ? { ready: false, answersHooks: false, reason, peerAnswers } : { ready: false, answersHooks: false, reason };
  }
  if (peerAnswers) {
    return {
      ready: false,
      answersHooks: false,
      reason: `not connected to NATS for ${seconds} s; a peer is, and answers instead`,
      peerAnswers,
    };
  }
  return {
    ready: true,
    answersHooks: true,
    reason: `not connected to NATS for ${seconds} s, nor is any peer: answering LatticeUnavailable`,
  };
}

export interface ReadinessOptions {
  graceMs: number;
  /** `host:port` of each peer (a host may resolve to several addresses: each is a peer). */
  peers: string[];
  /** Peers are asked over HTTPS when this replica serves it (the same certificate). */
  tls: boolean;
  now: () => number;
  isConnected: () => boolean;
  onStateChange: (listener: (connected: boolean) => void) => void;
  logger: Logger;
  /** How often peers are asked while this replica is cut off. */
  peerCheckMs?: number;
}

export function replicaReadiness(options: ReadinessOptions) {
  const peerCheckMs = options.peerCheckMs ?? 2000;
  let disconnectedAt = options.now();
  let peerConnectedAt: number | undefined;
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  const askPeers = async () => {
    if (await anyPeerConnected(options.peers, options.tls, peerCheckMs)) peerConnectedAt = options.now();
  };
  const stopAsking = () => {
    clearInterval(timer);
    timer = undefined;
  };
  const startAsking = () => {
    if (timer || options.peers.length === 0) return;
    timer = setInterval(
      () => void askPeers().catch((err: unknown) => options.logger.debug({ err }, 'cannot ask peers')),
      peerCheckMs,
    ).unref();
  };
  options.onStateChange((connected) => {
    if (connected) return stopAsking();
    disconnectedAt = options.now();
    peerConnectedAt = undefined;
    startAsking();
  });
  if (!options.isConnected()) startAsking();
  return {
    state: (): ReadinessState =>
      readiness({
        stopping,
        connected: options.isConnected(),
        disconnectedAt,
        peerConnectedAt,
        now: options.now(),
        graceMs: options.graceMs,
        peerWordMs: 3 * peerCheckMs,
      }),
    stop(): void {
      stopping = true;
      stopAsking();
    },
  };
}

/** Asks every address of every peer at once; true when one says it is connected to NATS. */
async function anyPeerConnected(peers: string[], tls: boolean, timeoutMs: number): Promise<boolean> {
  const addresses = (await Promise.all(peers.map((peer) => addressesOf(peer)))).flat();
  const answers = await Promise.all(addresses.map((address) => natsConnectedAt(address, tls, timeoutMs)));
  return answers.includes(true);
}

async function addressesOf(peer: string): Promise<{ host: string; port: number }[]> {
  const at = peer.lastIndexOf(':');
  const host = peer.slice(0, at);
  const port = Number(peer.slice(at + 1));
  try {
    return (await lookup(host, { all: true })).map(({ address }) => ({ host: address, port }));
  } catch {
    return [];
  }
}

/**
 * GET /natsz of one peer. Over HTTPS its certificate names the Service, not the address asked, so
 * it is not checked: a forged "connected" can only keep this replica out of the Service longer.
 */
function natsConnectedAt(address: { host: string; port: number }, tls: boolean, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const send = tls ? httpsRequest : httpRequest;
    const req = send({ ...address, path: '/natsz', method: 'GET', timeout: timeoutMs, rejectUnauthorized: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (body.length < 1024) body += chunk;
      });
      res.on('end', () => resolve(res.statusCode === 200 && body.includes('"connected":true')));
      res.on('error', () => resolve(false));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}
