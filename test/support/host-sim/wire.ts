// JSON on the wire: control replies (`CtlResponse`) and CloudEvents, in the exact shapes wadm's
// decoders accept (lattice-host-protocol.md §2, §4).
import { randomUUID } from 'node:crypto';
import { JSONCodec, type Msg } from 'nats';

const json = JSONCodec();

/** `{success, message[, response]}`. wadm fails to decode a reply without `message`, so it is always set. */
export interface CtlReply {
  success: boolean;
  message: string;
  response?: unknown;
}

export const ok = (message = '', response?: unknown): CtlReply =>
  response === undefined ? { success: true, message } : { success: true, message, response };

export const failure = (message: string): CtlReply => ({ success: false, message });

export function respond(msg: Msg, reply: CtlReply): void {
  if (msg.reply) msg.respond(json.encode(reply));
}

/** Empty bodies (link.get, config.get, claims.get, host.ping) decode to undefined. */
export function decodeBody(msg: Msg): unknown {
  return msg.data.length === 0 ? undefined : json.decode(msg.data);
}

export function encode(value: unknown): Uint8Array {
  return json.encode(value);
}

/**
 * A CloudEvents 1.0 envelope. `source` must be the host id: wadm replaces `host_id` in the data
 * with it. `data` must be an object, not a JSON string, or wadm silently skips the event.
 */
export function cloudEvent(source: string, type: string, data: Record<string, unknown>): Record<string, unknown> {
  return {
    specversion: '1.0',
    id: randomUUID(),
    type: `com.wasmcloud.lattice.${type}`,
    source,
    datacontenttype: 'application/json',
    time: new Date().toISOString(),
    data,
  };
}
