// The NATS connection, kept up forever without restarting the process. nats.js reconnects an
// established connection by itself; this loop covers what it does not: the first connect
// (the service must start and answer /healthz while NATS is down) and a connection that
// closes for good. Readiness follows the connection state.
import { connect, ErrorCode, Events, NatsError, type ConnectionOptions, type NatsConnection } from 'nats';
import type { Logger } from 'pino';

export interface NatsLinkOptions {
  servers: string[];
  name: string;
  /** Extra connection options (credentials, TLS), already loaded. */
  connectOptions?: Partial<ConnectionOptions>;
  /** Delay between attempts to (re)establish a closed connection, in ms. */
  retryDelayMs?: number;
}

export interface NatsLink {
  /** The connection while it is up; undefined while connecting or reconnecting. */
  current(): NatsConnection | undefined;
  isConnected(): boolean;
  /** Called after every (re)connect: subscriptions may have missed messages. */
  onReconnect(listener: () => void): void;
  onStateChange(listener: (connected: boolean) => void): void;
  close(): Promise<void>;
}

export function startNatsLink(options: NatsLinkOptions, logger: Logger): NatsLink {
  let connection: NatsConnection | undefined;
  let connected = false;
  let stopping = false;
  const reconnectListeners: (() => void)[] = [];
  const stateListeners: ((connected: boolean) => void)[] = [];
  const retryDelay = options.retryDelayMs ?? 2000;

  const setConnected = (value: boolean) => {
    if (connected === value) return;
    connected = value;
    for (const listener of stateListeners) listener(value);
  };

  async function watch(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (status.type === Events.Disconnect) {
        logger.warn({ server: String(status.data) }, 'NATS disconnected; reconnecting');
        setConnected(false);
      } else if (status.type === Events.Reconnect) {
        logger.info({ server: String(status.data) }, 'NATS reconnected');
        setConnected(true);
        for (const listener of reconnectListeners) listener();
      } else if (status.type === Events.Error) {
        // A refused subject is reported where it matters (the resource's status, the lattice
        // watch's warning, nats_permission_denied_total): here only at debug, with what was refused.
        const refused = (status as { permissionContext?: { operation: string; subject: string } }).permissionContext;
        if (refused) logger.debug({ operation: refused.operation, subject: refused.subject }, 'NATS refused a subject');
        else logger.error({ err: errorText(status.data) }, 'NATS error');
      }
    }
  }

  const connectOptions = (): ConnectionOptions => ({
    servers: options.servers,
    name: options.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1000,
    timeout: 5000,
    // nats.js captures a stack trace for every request by default (an Error per request, ~0.15 ms
    // of a new application's hook call): our errors say which request failed without it.
    noAsyncTraces: true,
    ...options.connectOptions,
  });

  /**
   * nats.js (2.29) with reconnecting on reports a connection that the server closes before its
   * first PONG as TIMEOUT, after `timeout`. That is how a TLS 1.3 server rejects a client
   * certificate: its alert arrives after our side of the handshake. One attempt without
   * reconnecting surfaces what happened: the alert ("tlsv1 alert unknown ca") or, as often, a reset.
   */
  async function explain(err: unknown): Promise<string> {
    if (!(err instanceof NatsError && err.code === ErrorCode.Timeout)) return errorText(err);
    const probe = await connect({ ...connectOptions(), reconnect: false }).then(
      (nc) => nc.close().then(() => undefined),
      (e: unknown) => e,
    );
    if (probe === undefined) return errorText(err);
    const reset = ['ECONNRESET', 'EPIPE'].includes(String((probe as { code?: unknown }).code));
    const clientCert = Boolean(options.connectOptions?.tls?.certFile);
    return reset && clientCert
      ? `${errorText(probe)} right after the TLS handshake: the server may not trust the client certificate`
      : errorText(probe);
  }

  async function keepConnected(): Promise<void> {
    let attempt = 0;
    while (!stopping) {
      try {
        const nc = await connect(connectOptions());
        attempt = 0;
        if (stopping) {
          await nc.close();
          return;
        }
        connection = nc;
        logger.info({ server: nc.getServer() }, 'NATS connected');
        setConnected(true);
        for (const listener of reconnectListeners) listener();
        watch(nc).catch((err: unknown) => logger.error({ err: errorText(err) }, 'NATS status stream failed'));
        const closed = await nc.closed();
        connection = undefined;
        setConnected(false);
        if (!stopping) logger.error({ err: closed ? errorText(closed) : undefined }, 'NATS connection closed; connecting again');
      } catch (err) {
        attempt++;
        // One line per attempt is enough to diagnose (wrong URL, credentials, TLS) without flooding.
        if (attempt === 1 || attempt % 30 === 0) {
          logger.error({ err: await explain(err), servers: options.servers, attempt }, 'cannot connect to NATS; retrying');
        }
      }
      if (!stopping) await sleep(retryDelay);
    }
  }

  // It catches every failure of an attempt; a throw here is a bug, logged rather than left unhandled.
  keepConnected().catch((err: unknown) => logger.fatal({ err: errorText(err) }, 'NATS connection loop ended'));
  return {
    current: () => (connected ? connection : undefined),
    isConnected: () => connected,
    onReconnect: (listener) => reconnectListeners.push(listener),
    onStateChange: (listener) => stateListeners.push(listener),
    async close() {
      stopping = true;
      const nc = connection;
      const up = connected;
      connection = undefined;
      setConnected(false);
      if (nc) await closeConnection(nc, up);
    },
  };
}

/**
 * Drains a live connection, then closes it whatever drain() did: drain() of a connection that is
 * reconnecting resolves after ~2 s without closing it (nats.js 2.29), which then reconnects forever
 * and keeps its process alive. `live: false` skips the drain when the caller knows it is down.
 */
export async function closeConnection(nc: NatsConnection, live = true): Promise<void> {
  if (nc.isClosed()) return;
  if (live) await nc.drain().catch(() => undefined);
  if (!nc.isClosed()) await nc.close();
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
