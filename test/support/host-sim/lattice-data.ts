// The lattice-wide requests: links, named config and claims (lattice-host-protocol.md §4 rows
// 4–10). One host of the queue group answers each; the store is shared by all simulated hosts.
import { stringList, stringMap, text } from './body.js';
import { subjectTail, type Handler } from './context.js';
import type { Link } from './types.js';
import { failure, ok } from './wire.js';

function readLink(body: unknown): Link {
  return {
    source_id: text(body, 'source_id'),
    target: text(body, 'target'),
    name: text(body, 'name', 'default'),
    wit_namespace: text(body, 'wit_namespace'),
    wit_package: text(body, 'wit_package'),
    interfaces: stringList(body, 'interfaces'),
    source_config: stringList(body, 'source_config'),
    target_config: stringList(body, 'target_config'),
  };
}

/** The link is stored before the reply: wadm's next `link.get` must already see it. */
export const putLink: Handler = (ctx, { body }) => {
  const link = readLink(body);
  const error = ctx.lattice.putLink(link);
  if (error !== undefined) {
    return { reply: failure(error), after: () => ctx.emit('linkdef_set_failed', { ...link, error }) };
  }
  return { reply: ok('successfully set link'), after: () => ctx.emit('linkdef_set', { ...link }) };
};

/** Deleting an absent link still succeeds and still announces the deletion. */
export const deleteLink: Handler = (ctx, { body }) => {
  const id = { source_id: text(body, 'source_id'), name: text(body, 'name', 'default'), wit_namespace: text(body, 'wit_namespace'), wit_package: text(body, 'wit_package') };
  const removed = ctx.lattice.deleteLink(id);
  const data = removed ? { ...id, target: removed.target, interfaces: removed.interfaces } : id;
  return { reply: ok('successfully deleted link'), after: () => ctx.emit('linkdef_deleted', data) };
};

/** `response` must be present (even `[]`), or wadm keeps its previous link list. */
export const getLinks: Handler = (ctx) => ({ reply: ok('', ctx.lattice.links()) });

export const putConfig: Handler = (ctx, request) => {
  const name = subjectTail(request);
  ctx.lattice.config.set(name, stringMap(request.body ?? {}));
  return { reply: ok('successfully put config'), after: () => ctx.emit('config_set', { config_name: name }) };
};

/** Missing config is a success without `response`, exactly as the real host answers. */
export const getConfig: Handler = (ctx, request) => {
  const found = ctx.lattice.config.get(subjectTail(request));
  return { reply: found ? ok('', { ...found }) : ok('Configuration not found') };
};

export const deleteConfig: Handler = (ctx, request) => {
  const name = subjectTail(request);
  ctx.lattice.config.delete(name);
  return { reply: ok('successfully deleted config'), after: () => ctx.emit('config_deleted', { config_name: name }) };
};

/** Images are unsigned, so there are no claims; wadm nacks the heartbeat if `response` is absent. */
export const getClaims: Handler = () => ({ reply: ok('', []) });
