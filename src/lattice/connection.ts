// The NATS connection, kept up forever without restarting the process. nats.js reconnects an
// established connection by itself; this loop covers what it does not: the first connect
// (the service must start and answer /healthz while NATS is down) and a connection that
// closes for good. Readiness follows the connection state.
import { connect, Events, type ConnectionOptions, type NatsConnection } from 'nats';
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
        logger.error({ err: errorText(status.data) }, 'NATS error');
      }
    }
  }

  async function keepConnected(): Promise<void> {
    let attempt = 0;
    while (!stopping) {
      try {
        const nc = await connect({
          servers: options.servers,
          name: options.name,
          maxReconnectAttempts: -1,
          reconnectTimeWait: 1000,
          timeout: 5000,
          ...options.connectOptions,
        });
        attempt = 0;
        if (stopping) {
          await nc.close();
          return;
        }
        connection = nc;
        logger.info({ server: nc.getServer() }, 'NATS connected');
        setConnected(true);
        for (const listener of reconnectListeners) listener();
        void watch(nc);
        const closed = await nc.closed();
        connection = undefined;
        setConnected(false);
        if (!stopping) logger.error({ err: closed ? errorText(closed) : undefined }, 'NATS connection closed; connecting again');
      } catch (err) {
        attempt++;
        // One line per attempt is enough to diagnose (wrong URL, credentials, TLS) without flooding.
        if (attempt === 1 || attempt % 30 === 0) {
          logger.error({ err: errorText(err), servers: options.servers, attempt }, 'cannot connect to NATS; retrying');
        }
      }
      if (!stopping) await sleep(retryDelay);
    }
  }

  void keepConnected();
  return {
    current: () => (connected ? connection : undefined),
    isConnected: () => connected,
    onReconnect: (listener) => reconnectListeners.push(listener),
    onStateChange: (listener) => stateListeners.push(listener),
    async close() {
      stopping = true;
      const nc = connection;
      connection = undefined;
      setConnected(false);
      if (nc && !nc.isClosed()) await nc.drain().catch(() => nc.close());
    },
  };
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
