// A NATS client's connection, held at a gate: what it publishes on some subjects waits there until
// released, everything else passes. For faults the wadm relay cannot make because they happen on
// wadm's own connection: its status publications (the JetStream stream wadm_status), held back so
// that wadm's latest status stays the previous version's. It reads the client protocol's framing
// (https://docs.nats.io/reference/reference-protocols/nats-protocol): one line per operation, and
// PUB/HPUB followed by a payload whose size the line's last field gives.
import { startTcpRelay, type ClientStream } from './tcp-relay.js';

export interface NatsGate {
  /** `nats://127.0.0.1:<port>`: give it to the client instead of the server's URL. */
  url: string;
  /** From now on, publications on subjects starting with `prefix` wait at the gate. */
  hold(prefix: string): void;
  /** Publications held so far and not released. */
  held(): number;
  /** Sends what was held, in order, and stops holding. */
  release(): void;
  close(): Promise<void>;
}

const CRLF = Buffer.from('\r\n');

export async function startNatsGate(serverPort: number): Promise<NatsGate> {
  let prefix: string | undefined;
  const waiting: (() => void)[] = [];
  const relay = await startTcpRelay(serverPort, (): ClientStream => {
    let pending = Buffer.alloc(0);
    return (chunk, toServer) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const frame = nextFrame(pending);
        if (!frame) return;
        pending = pending.subarray(frame.length);
        const bytes = Buffer.from(frame.bytes);
        if (prefix !== undefined && frame.subject?.startsWith(prefix)) waiting.push(() => toServer(bytes));
        else toServer(bytes);
      }
    };
  });
  return {
    url: `nats://127.0.0.1:${relay.port}`,
    hold: (subjects) => void (prefix = subjects),
    held: () => waiting.length,
    release() {
      prefix = undefined;
      for (const send of waiting.splice(0)) send();
    },
    close: () => relay.close(),
  };
}

/** The first whole operation in `buffer`, with the subject of a publication; undefined until it has all arrived. */
function nextFrame(buffer: Buffer): { bytes: Buffer; length: number; subject?: string } | undefined {
  const end = buffer.indexOf(CRLF);
  if (end < 0) return undefined;
  const fields = buffer.subarray(0, end).toString('latin1').trim().split(/\s+/);
  const op = fields[0]!.toUpperCase();
  if (op !== 'PUB' && op !== 'HPUB') return { bytes: buffer.subarray(0, end + 2), length: end + 2 };
  const length = end + 2 + Number(fields.at(-1)) + 2;
  if (buffer.length < length) return undefined;
  return { bytes: buffer.subarray(0, length), length, subject: fields[1]! };
}
