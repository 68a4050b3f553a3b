// A TCP relay in front of a server, to cut one client off while others keep their connections:
// one replica losing NATS while the other does not. cut() drops its connections and refuses new
// ones until mend().
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpRelay {
  /** `nats://127.0.0.1:<port>` style: the relay's port on loopback. */
  port: number;
  cut(): void;
  mend(): void;
  close(): Promise<void>;
}

/**
 * What a client sends, in the order it arrives, and the way on to the server: a relay that looks
 * inside the client's stream (nats-gate.ts) forwards, holds or reorders what it gets.
 */
export type ClientStream = (chunk: Buffer, toServer: (bytes: Buffer) => void) => void;

export async function startTcpRelay(targetPort: number, fromClient?: () => ClientStream): Promise<TcpRelay> {
  const open = new Set<Socket>();
  let cut = false;
  const server = createServer((client) => {
    if (cut) return void client.destroy();
    const upstream = connect(targetPort, '127.0.0.1');
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      open.add(a);
      a.on('error', () => b.destroy());
      a.on('close', () => {
        open.delete(a);
        b.destroy();
      });
    }
    if (fromClient) {
      const stream = fromClient();
      client.on('data', (chunk: Buffer) => stream(chunk, (bytes) => void (upstream.destroyed || upstream.write(bytes))));
    } else client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    cut() {
      cut = true;
      for (const socket of open) socket.destroy();
    },
    mend() {
      cut = false;
    },
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
