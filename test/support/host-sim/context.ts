// What a control-interface handler gets and gives back. Handlers return the reply plus the work
// to do after replying: a real host acknowledges first and then works, and wadm's command worker
// (ack_wait 2 s, one command at a time) depends on that.
import type { HostState, LatticeState } from './state.js';
import type { CtlReply } from './wire.js';

export interface HandlerContext {
  lattice: LatticeState;
  /** The host whose subscription received the request. */
  host: HostState;
  /** Publishes an event with this host as the CloudEvent source. */
  emit(type: string, data: Record<string, unknown>): void;
  /** Stops this host (for `host.stop`). */
  stopHost(): void;
}

export interface CtlRequestIn {
  /** The subject's tokens after `wasmbus.ctl.v1.{lattice}`: `['component', 'scale', 'N…']`. */
  tokens: string[];
  body: unknown;
}

export interface Outcome {
  /** Undefined: stay silent (auctions only answer when the host qualifies). */
  reply: CtlReply | undefined;
  after?: () => void;
}

export type Handler = (ctx: HandlerContext, request: CtlRequestIn) => Outcome;

/** The last subject token: the config name or host id of `config.put.{name}`, `host.get.{id}`. */
export function subjectTail(request: CtlRequestIn): string {
  return request.tokens.slice(2).join('.');
}
