// Request/reply over one NATS connection, in place of nats.js's request(), for one reason: a reply
// that comes after the request timed out. nats.js forgets a request at its timeout and drops its
// reply; wadm, which serves its API one request at a time, still works through the request and
// answers it, and that late answer is the sign of life a busy wadm gives (signs-of-life.ts). So
// this keeps the tokens of the requests that timed out (the newest LATE_TOKENS of them) and tells
// whoever sent one when its reply arrives.
//
// Everything else is what nats.js's request() does, with the same errors, so that errors.ts judges
// them alike: one subscription on `<inbox prefix>.<nuid>.*` (the connection's own prefix, `_INBOX`
// by default, which SECURITY.md grants), made at the first request and made again after NATS
// refused it; a token per request; a 503 without payload is NoResponders; a refused publish fails
// the oldest request to that subject, a refused inbox every waiting request, both with NATS's
// PermissionsViolation; a timeout is a Timeout. nats.js keeps the subscription across reconnects
// and sends it again; requests then wait on, as they would in nats.js. One difference: a request
// still waiting when the connection closes or drains fails as ConnectionClosed (nats.js says
// Timeout), since it was not wadm that let it down.
import {
  createInbox,
  ErrorCode,
  Events,
  NatsError,
  type ConnectionOptions,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  type Status,
  type Subscription,
} from 'nats';

/** How many timed-out requests are remembered for their late replies; the oldest are forgotten first. */
export const LATE_TOKENS = 4096;

export interface MuxRequestOptions {
  /** How long to wait for the reply, in ms. */
  timeout: number;
  headers?: MsgHdrs;
  /** Called once if the reply (not a no-responders status) arrives after the request timed out. */
  onLateReply?: () => void;
}

interface Waiting {
  readonly subject: string;
  readonly timer: NodeJS.Timeout;
  readonly resolve: (msg: Msg) => void;
  readonly reject: (err: NatsError) => void;
  readonly onLateReply: (() => void) | undefined;
}

interface Inbox {
  /** `<prefix>.<nuid>.`: a reply's subject is this and its request's token. */
  readonly base: string;
  readonly sub: Subscription;
}

const muxes = new WeakMap<NatsConnection, RequestMux>();

/** The connection's one multiplexer: every client of the connection shares its subscription. */
export function requestMuxOf(nc: NatsConnection): RequestMux {
  let mux = muxes.get(nc);
  if (mux === undefined) {
    mux = new RequestMux(nc);
    muxes.set(nc, mux);
  }
  return mux;
}

export class RequestMux {
  private inbox: Inbox | undefined;
  private tokens = 0;
  private readonly waiting = new Map<string, Waiting>();
  /** Timed-out requests' tokens, oldest first, with whom to tell of a late reply. */
  private readonly late = new Map<string, () => void>();

  constructor(
    readonly connection: NatsConnection,
    private readonly lateTokens = LATE_TOKENS,
  ) {
    this.watchRefusals().catch(() => undefined);
  }

  /** Requests waiting for their reply. */
  get pending(): number {
    return this.waiting.size;
  }

  /** Timed-out requests whose late reply would still be told. */
  get remembered(): number {
    return this.late.size;
  }

  request(subject: string, data: string | Uint8Array, options: MuxRequestOptions): Promise<Msg> {
    const nc = this.connection;
    // nats.js's request() refuses a draining connection too: no new inbox can be made then.
    if (nc.isClosed()) return Promise.reject(NatsError.errorForCode(ErrorCode.ConnectionClosed));
    if (nc.isDraining()) return Promise.reject(NatsError.errorForCode(ErrorCode.ConnectionDraining));
    let inbox: Inbox;
    try {
      inbox = this.subscribed();
    } catch (err) {
      return Promise.reject(err as Error);
    }
    const token = (++this.tokens).toString(36);
    return new Promise<Msg>((resolve, reject) => {
      const timer = setTimeout(() => this.timedOut(token), options.timeout);
      this.waiting.set(token, { subject, timer, resolve, reject, onLateReply: options.onLateReply });
      try {
        nc.publish(subject, data, { reply: inbox.base + token, ...(options.headers ? { headers: options.headers } : {}) });
      } catch (err) {
        this.fail(token, err as NatsError);
      }
    });
  }

  /** The inbox subscription, made when there is none (first request, or after NATS refused it). */
  private subscribed(): Inbox {
    if (this.inbox !== undefined) return this.inbox;
    const prefix = (this.connection as Partial<{ options: ConnectionOptions }>).options?.inboxPrefix;
    const base = `${createInbox(prefix)}.`;
    const sub = this.connection.subscribe(`${base}*`, {
      callback: (err, msg) => (err ? this.refused(sub, err) : this.replied(base, msg)),
    });
    const inbox = { base, sub };
    this.inbox = inbox;
    // Closed by the connection's close or drain (a refusal has already let it go). It never rejects.
    void sub.closed.then(
      () => this.inbox === inbox && this.lost(NatsError.errorForCode(ErrorCode.ConnectionClosed)),
      () => undefined,
    );
    return inbox;
  }

  private replied(base: string, msg: Msg): void {
    const token = msg.subject.slice(base.length);
    // NATS's own status, not a responder's answer: as nats.js's isRequestError.
    const noResponders = msg.data.length === 0 && msg.headers?.code === 503;
    const request = this.waiting.get(token);
    if (request !== undefined) {
      this.waiting.delete(token);
      clearTimeout(request.timer);
      if (noResponders) request.reject(NatsError.errorForCode(ErrorCode.NoResponders));
      else request.resolve(msg);
      return;
    }
    const tell = this.late.get(token);
    if (tell === undefined) return;
    this.late.delete(token);
    if (!noResponders) tell();
  }

  private timedOut(token: string): void {
    const request = this.waiting.get(token);
    if (request === undefined) return;
    this.waiting.delete(token);
    if (request.onLateReply !== undefined) {
      this.late.set(token, request.onLateReply);
      if (this.late.size > this.lateTokens) this.late.delete(this.late.keys().next().value!);
    }
    request.reject(NatsError.errorForCode(ErrorCode.Timeout));
  }

  private fail(token: string, err: NatsError): void {
    const request = this.waiting.get(token);
    if (request === undefined) return;
    this.waiting.delete(token);
    clearTimeout(request.timer);
    request.reject(err);
  }

  /** NATS refused the inbox subscription: no reply can come; the next request subscribes again. */
  private refused(sub: Subscription, err: NatsError): void {
    if (this.inbox?.sub === sub) this.lost(err);
  }

  /** The inbox is gone: every waiting request fails with `err`, and no late reply can come. */
  private lost(err: NatsError): void {
    this.inbox = undefined;
    this.late.clear();
    for (const token of [...this.waiting.keys()]) this.fail(token, err);
  }

  /**
   * A refused publish reaches nats.js as an error with its subject, which it matches to its own
   * requests only: here, as there, the oldest request waiting on that subject fails with it.
   */
  private async watchRefusals(): Promise<void> {
    const statuses = this.connection.status() as AsyncIterable<Status> & { stop?: () => void };
    // nats.js does not end a status iterator when its connection closes.
    void this.connection.closed().then(
      () => statuses.stop?.(),
      () => undefined,
    );
    for await (const status of statuses) {
      const refused = status.permissionContext;
      if (status.type !== Events.Error || refused?.operation !== 'publish') continue;
      for (const [token, request] of this.waiting) {
        if (request.subject !== refused.subject) continue;
        const err = NatsError.errorForCode(ErrorCode.PermissionsViolation);
        err.permissionContext = { operation: refused.operation, subject: refused.subject };
        this.fail(token, err);
        break;
      }
    }
  }
}
