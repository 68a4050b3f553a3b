// Requests about the host itself: ping, inventory, stop, labels, registry credentials. wadm
// 0.21.1 sends none of them, but other lattice clients (wash, tests) do.
import { text } from './body.js';
import type { Handler } from './context.js';
import { inventory, summary } from './inventory.js';
import { ok } from './wire.js';

export const ping: Handler = (ctx) => ({ reply: ok('', summary(ctx.host, ctx.lattice.lattice)) });

export const getInventory: Handler = (ctx) => ({ reply: ok('', inventory(ctx.host)) });

export const stopHost: Handler = (ctx) => ({ reply: ok(''), after: () => ctx.stopHost() });

export const putLabel: Handler = (ctx, { body }) => {
  const key = text(body, 'key');
  const value = text(body, 'value');
  return { reply: ok(''), after: () => changeLabels(ctx, { ...ctx.host.labels, [key]: value }) };
};

export const deleteLabel: Handler = (ctx, { body }) => {
  const { [text(body, 'key')]: _removed, ...rest } = ctx.host.labels;
  return { reply: ok(''), after: () => changeLabels(ctx, rest) };
};

/** wadm ignores `labels_changed`; it sees new labels in the next heartbeat. */
function changeLabels(ctx: Parameters<Handler>[0], labels: Record<string, string>): void {
  ctx.host.labels = labels;
  ctx.emit('labels_changed', { host_id: ctx.host.id, labels });
}

export const putRegistries: Handler = () => ({ reply: ok('') });
