// Which handler answers which control subject, and the envelope around every handler: record the
// request, turn a bad body or a thrown error into `success:false`, reply, then do the work.
import type { Msg } from 'nats';
import { auctionComponent, scaleComponent, updateComponent } from './components.js';
import type { Handler, HandlerContext, Outcome } from './context.js';
import * as host from './host-requests.js';
import * as data from './lattice-data.js';
import { auctionProvider, startProvider, stopProvider } from './providers.js';
import { decodeBody, failure, respond } from './wire.js';

const HANDLERS: Readonly<Record<string, Handler>> = {
  'component.scale': scaleComponent,
  'component.update': updateComponent,
  'component.auction': auctionComponent,
  'provider.start': startProvider,
  'provider.stop': stopProvider,
  'provider.auction': auctionProvider,
  'link.put': data.putLink,
  'link.del': data.deleteLink,
  'link.get': data.getLinks,
  'config.put': data.putConfig,
  'config.get': data.getConfig,
  'config.del': data.deleteConfig,
  'claims.get': data.getClaims,
  'host.ping': host.ping,
  'host.get': host.getInventory,
  'host.stop': host.stopHost,
  'label.put': host.putLabel,
  'label.del': host.deleteLabel,
  'registry.put': host.putRegistries,
};

/** Handles one message received on a subject under `prefix` (`wasmbus.ctl.v1.{lattice}`). */
export function dispatch(ctx: HandlerContext, prefix: string, msg: Msg): void {
  const operation = msg.subject.slice(prefix.length + 1);
  const outcome = decide(ctx, operation, msg);
  if (outcome.reply) respond(msg, outcome.reply);
  outcome.after?.();
}

function decide(ctx: HandlerContext, operation: string, msg: Msg): Outcome {
  let body: unknown;
  try {
    body = decodeBody(msg);
  } catch {
    return { reply: failure('failed to deserialize request body') };
  }
  ctx.lattice.requests.push({ operation, hostId: ctx.host.id, body, at: new Date() });
  const tokens = operation.split('.');
  const handler = HANDLERS[tokens.slice(0, 2).join('.')];
  // The real host's answer to a subject it does not know (`nats/ctl.rs::handle_ctl_message`).
  if (!handler) return { reply: failure('unsupported subject') };
  try {
    return handler(ctx, { tokens, body });
  } catch (err) {
    return { reply: failure(err instanceof Error ? err.message : String(err)) };
  }
}
