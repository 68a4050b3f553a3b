// provider.start / provider.stop / provider.auction (lattice-host-protocol.md §4 rows 2–3).
// A provider "starts" at once and is healthy at once: wadm's link scaler waits for a health
// check before it reconciles, and a real host sends the first one 5 s after start.
import { stringMap, text } from './body.js';
import type { Handler } from './context.js';
import { satisfies } from './labels.js';
import { failure, ok } from './wire.js';

export const startProvider: Handler = (ctx, { body }) => {
  const id = text(body, 'provider_id');
  const imageRef = text(body, 'provider_ref');
  const annotations = stringMap(body, 'annotations');
  const hostId = ctx.host.id;
  if (ctx.host.providers.has(id)) return { reply: failure('provider with that ID is already running') };
  return {
    reply: ok('successfully started provider'),
    after: () => {
      const error = ctx.lattice.faults.starts.get(imageRef);
      if (error !== undefined) {
        ctx.emit('provider_start_failed', { provider_ref: imageRef, provider_id: id, host_id: hostId, error, link_name: 'default' });
        return;
      }
      ctx.host.providers.set(id, { imageRef, annotations });
      ctx.emit('provider_started', { host_id: hostId, image_ref: imageRef, provider_id: id, annotations });
      ctx.emit('health_check_passed', { host_id: hostId, provider_id: id });
    },
  };
};

export const stopProvider: Handler = (ctx, { body }) => {
  const id = text(body, 'provider_id');
  const running = ctx.host.providers.get(id);
  if (!running) return { reply: failure('provider with that ID is not running') };
  return {
    reply: ok('successfully stopped provider'),
    after: () => {
      ctx.host.providers.delete(id);
      ctx.emit('provider_stopped', {
        host_id: ctx.host.id, provider_id: id, annotations: running.annotations, reason: 'stop',
        instance_id: id, public_key: id, link_name: 'default',
      });
    },
  };
};

/** Not sent by wadm 0.21.1. A host bids when it meets the constraints and does not run the provider. */
export const auctionProvider: Handler = (ctx, { body }) => {
  const id = text(body, 'provider_id');
  const constraints = stringMap(body, 'constraints');
  if (!satisfies(ctx.host.labels, constraints) || ctx.host.providers.has(id)) return { reply: undefined };
  return { reply: ok('', { provider_ref: text(body, 'provider_ref'), provider_id: id, constraints, host_id: ctx.host.id }) };
};
