// The control-interface requests wadm 0.21.1 sends, answered as a wasmCloud 1.x host answers them
// (lattice-host-protocol.md §4). Each handler returns its reply and the work to do after replying:
// a real host acknowledges first and then works, and wadm's command worker (ack_wait 2 s, one
// command at a time) depends on that. Nothing is pulled or instantiated: work takes effect at once.
// Requests wadm never sends (ping, inventory, labels, auctions, updates) get the real host's answer
// to a subject it does not know.
import { JSONCodec, type Msg } from 'nats';

export type StringMap = Record<string, string>;

/** A link as the control interface carries it (`link.put` body, `link.get` entries, `linkdef_set` data). */
export interface Link {
  source_id: string;
  target: string;
  name: string;
  wit_namespace: string;
  wit_package: string;
  interfaces: string[];
  source_config: string[];
  target_config: string[];
}

/** One control request as received. */
export interface CtlRequest {
  /** The subject after `wasmbus.ctl.v1.{lattice}.`: `component.scale.N…`, `link.get`, `config.put.name`. */
  operation: string;
  /** The host that answered (lattice-wide requests are answered by one host of the queue group). */
  hostId: string;
  body: unknown;
}

export interface HostState {
  /** An nkeys server public key ("N…", 56 characters), as a real host uses. */
  readonly id: string;
  readonly friendlyName: string;
  readonly labels: StringMap;
  /** The annotations are those of the first start: a real host keeps them for later scales. */
  readonly components: Map<string, { imageRef: string; annotations: StringMap; maxInstances: number }>;
  readonly providers: Map<string, { imageRef: string; annotations: StringMap }>;
}

/** Links and named config are lattice-wide: real hosts share them through the LATTICEDATA/CONFIGDATA KV buckets. */
export interface LatticeData {
  readonly links: Map<string, Link>;
  readonly config: Map<string, StringMap>;
  readonly requests: CtlRequest[];
}

export interface Context {
  data: LatticeData;
  host: HostState;
  /** Publishes an event with this host as the CloudEvent source. */
  emit(type: string, data: Record<string, unknown>): void;
}

/** `{success, message[, response]}`: wadm fails to decode a reply without `message`. */
interface Outcome {
  reply: { success: boolean; message: string; response?: unknown };
  after?: () => void;
}

type Body = Record<string, unknown> | undefined;
type Handler = (ctx: Context, body: Body, tail: string) => Outcome;

const json = JSONCodec();
const ok = (message = '', response?: unknown): Outcome['reply'] => ({
  success: true,
  message,
  ...(response === undefined ? {} : { response }),
});
const failure = (message: string): Outcome['reply'] => ({ success: false, message });

/** Answers one request on `wasmbus.ctl.v1.{lattice}.{operation}`; a bad body or a throw becomes `success: false`. */
export function handle(ctx: Context, operation: string, msg: Msg): void {
  let outcome: Outcome;
  try {
    const body = msg.data.length === 0 ? undefined : (json.decode(msg.data) as Body);
    ctx.data.requests.push({ operation, hostId: ctx.host.id, body });
    const tokens = operation.split('.');
    const handler = HANDLERS[tokens.slice(0, 2).join('.')];
    // The real host's answer to a subject it does not know (`nats/ctl.rs::handle_ctl_message`).
    outcome = handler ? handler(ctx, body, tokens.slice(2).join('.')) : { reply: failure('unsupported subject') };
  } catch (err) {
    outcome = { reply: failure(err instanceof Error ? err.message : String(err)) };
  }
  if (msg.reply) msg.respond(json.encode(outcome.reply));
  outcome.after?.();
}

function text(body: Body, key: string, fallback?: string): string {
  const value = body?.[key] ?? fallback;
  if (typeof value !== 'string') throw new Error(`request body has no string "${key}"`);
  return value;
}

function map(body: Body, key: string): StringMap {
  return { ...(body?.[key] as StringMap | undefined) };
}

function linkKey(link: Pick<Link, 'source_id' | 'name' | 'wit_namespace' | 'wit_package'>): string {
  return JSON.stringify([link.source_id, link.wit_namespace, link.wit_package, link.name]);
}

const HANDLERS: Readonly<Record<string, Handler>> = {
  'component.scale': (ctx, body) => {
    const [id, imageRef, annotations] = [text(body, 'component_id'), text(body, 'component_ref'), map(body, 'annotations')];
    const count = Number(body?.['count'] ?? 0);
    const running = ctx.host.components.get(id);
    if (running && running.imageRef !== imageRef && body?.['allow_update'] !== true) {
      return { reply: failure(`component ${id} is already running with image ${running.imageRef}; update it to change the image`) };
    }
    const after = () => {
      if (count === 0) ctx.host.components.delete(id);
      else ctx.host.components.set(id, { imageRef, annotations: running?.annotations ?? annotations, maxInstances: count });
      ctx.emit('component_scaled', {
        annotations: running?.annotations ?? annotations,
        host_id: ctx.host.id,
        image_ref: imageRef,
        max_instances: count,
        component_id: id,
      });
    };
    return { reply: ok(), after };
  },
  // A provider is healthy at once: wadm's link scaler waits for a health check, which a real host sends 5 s after start.
  'provider.start': (ctx, body) => {
    const [id, imageRef, annotations] = [text(body, 'provider_id'), text(body, 'provider_ref'), map(body, 'annotations')];
    if (ctx.host.providers.has(id)) return { reply: failure('provider with that ID is already running') };
    const after = () => {
      ctx.host.providers.set(id, { imageRef, annotations });
      ctx.emit('provider_started', { host_id: ctx.host.id, image_ref: imageRef, provider_id: id, annotations });
      ctx.emit('health_check_passed', { host_id: ctx.host.id, provider_id: id });
    };
    return { reply: ok('successfully started provider'), after };
  },
  'provider.stop': (ctx, body) => {
    const id = text(body, 'provider_id');
    const running = ctx.host.providers.get(id);
    if (!running) return { reply: failure('provider with that ID is not running') };
    const after = () => {
      ctx.host.providers.delete(id);
      ctx.emit('provider_stopped', {
        host_id: ctx.host.id,
        provider_id: id,
        annotations: running.annotations,
        reason: 'stop',
        instance_id: id,
        public_key: id,
        link_name: 'default',
      });
    };
    return { reply: ok('successfully stopped provider'), after };
  },
  // Stored before the reply: wadm's next `link.get` must already see it (`handle_link_put`).
  'link.put': (ctx, body) => {
    const link: Link = {
      source_id: text(body, 'source_id'),
      target: text(body, 'target'),
      name: text(body, 'name', 'default'),
      wit_namespace: text(body, 'wit_namespace'),
      wit_package: text(body, 'wit_package'),
      interfaces: [...((body?.['interfaces'] as string[]) ?? [])],
      source_config: [...((body?.['source_config'] as string[]) ?? [])],
      target_config: [...((body?.['target_config'] as string[]) ?? [])],
    };
    const missing = [...link.source_config, ...link.target_config].find((name) => !ctx.data.config.has(name));
    const existing = ctx.data.links.get(linkKey(link));
    const error =
      missing !== undefined
        ? `failed to validate link config: configuration ${missing} does not exist`
        : existing && existing.target !== link.target && existing.interfaces.some((i) => link.interfaces.includes(i))
          ? 'link already exists with different target, consider deleting the existing link or using a different link name'
          : undefined;
    if (error !== undefined) return { reply: failure(error), after: () => ctx.emit('linkdef_set_failed', { ...link, error }) };
    ctx.data.links.set(linkKey(link), link);
    return { reply: ok('successfully set link'), after: () => ctx.emit('linkdef_set', { ...link }) };
  },
  // Deleting an absent link still succeeds and still announces the deletion.
  'link.del': (ctx, body) => {
    const id = {
      source_id: text(body, 'source_id'),
      name: text(body, 'name', 'default'),
      wit_namespace: text(body, 'wit_namespace'),
      wit_package: text(body, 'wit_package'),
    };
    const removed = ctx.data.links.get(linkKey(id));
    ctx.data.links.delete(linkKey(id));
    const data = removed ? { ...id, target: removed.target, interfaces: removed.interfaces } : id;
    return { reply: ok('successfully deleted link'), after: () => ctx.emit('linkdef_deleted', data) };
  },
  // `response` must be present (even `[]`), or wadm keeps its previous link list.
  'link.get': (ctx) => ({ reply: ok('', [...ctx.data.links.values()]) }),
  // config.put sends a bare map.
  'config.put': (ctx, body, name) => {
    ctx.data.config.set(name, { ...(body as StringMap | undefined) });
    return { reply: ok('successfully put config'), after: () => ctx.emit('config_set', { config_name: name }) };
  },
  // Missing config is a success without `response`, exactly as the real host answers.
  'config.get': (ctx, _body, name) => {
    const found = ctx.data.config.get(name);
    return { reply: found ? ok('', { ...found }) : ok('Configuration not found') };
  },
  'config.del': (ctx, _body, name) => {
    ctx.data.config.delete(name);
    return { reply: ok('successfully deleted config'), after: () => ctx.emit('config_deleted', { config_name: name }) };
  },
  // Images are unsigned, so there are no claims; wadm nacks the heartbeat if `response` is absent.
  'claims.get': () => ({ reply: ok('', []) }),
};
