// component.scale / component.update / component.auction, as a wasmCloud 1.x host answers them
// (lattice-host-protocol.md §4 row 1). Nothing is pulled or instantiated: a scale takes effect at once.
import { flag, natural, stringMap, text } from './body.js';
import type { Handler, HandlerContext } from './context.js';
import { satisfies } from './labels.js';
import type { StringMap } from './types.js';
import { failure, ok } from './wire.js';

export const scaleComponent: Handler = (ctx, { body }) => {
  const id = text(body, 'component_id');
  const imageRef = text(body, 'component_ref');
  const count = natural(body, 'count');
  const annotations = stringMap(body, 'annotations');
  const running = ctx.host.components.get(id);
  if (running && running.imageRef !== imageRef && !flag(body, 'allow_update')) {
    return { reply: failure(`component ${id} is already running with image ${running.imageRef}; update it to change the image`) };
  }
  return {
    reply: ok(),
    after: () => {
      // Only starting can fail: a stop never fetches anything.
      const error = count > 0 ? ctx.lattice.faults.scales.get(imageRef) : undefined;
      if (error !== undefined) {
        ctx.emit('component_scale_failed', { annotations, component_id: id, host_id: ctx.host.id, image_ref: imageRef, max_instances: count, error });
      } else {
        applyScale(ctx, id, imageRef, count, annotations);
      }
    },
  };
};

/** A running component keeps the annotations of its first start, as the real host does. */
function applyScale(ctx: HandlerContext, id: string, imageRef: string, count: number, annotations: StringMap): void {
  const running = ctx.host.components.get(id);
  const kept = running?.annotations ?? annotations;
  if (count === 0) ctx.host.components.delete(id);
  else if (running) Object.assign(running, { imageRef, maxInstances: count });
  else ctx.host.components.set(id, { imageRef, annotations, maxInstances: count });
  ctx.emit('component_scaled', { annotations: kept, host_id: ctx.host.id, image_ref: imageRef, max_instances: count, component_id: id });
}

/** Not sent by wadm 0.21.1; answered so that other lattice clients (wash) work too. */
export const updateComponent: Handler = (ctx, { body }) => {
  const id = text(body, 'component_id');
  const imageRef = text(body, 'new_component_ref');
  const running = ctx.host.components.get(id);
  if (!running) return { reply: failure(`component ${id} is not running on this host`) };
  return {
    reply: ok(`component ${id} updated`),
    after: () => applyScale(ctx, id, imageRef, running.maxInstances, running.annotations),
  };
};

/** Only hosts that meet the constraints and do not run the component bid. */
export const auctionComponent: Handler = (ctx, { body }) => {
  const id = text(body, 'component_id');
  const constraints = stringMap(body, 'constraints');
  if (!satisfies(ctx.host.labels, constraints) || ctx.host.components.has(id)) return { reply: undefined };
  return { reply: ok('', { component_ref: text(body, 'component_ref'), component_id: id, constraints, host_id: ctx.host.id }) };
};
