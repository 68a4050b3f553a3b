// The hook gate: what a hook call must pass before its body is read — the server still open, the
// bearer token, and room among the calls and the bytes in flight.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Authorize } from './auth.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Counted in the hook gate's calls in flight. */
    admitted: boolean;
    /** What it counts for in the hook gate's bytes in flight. */
    admittedBytes: number;
    /** Its handler's work (wadm requests, the parsed body) goes on, whether or not its caller still waits. */
    working: boolean;
    /** Its response is over: sent, or its caller gone. */
    closed: boolean;
    /** When it arrived (performance.now(), its headers read): its budget counts from there (server.ts). */
    arrivedAt: number;
  }
}

/**
 * Every "try again later" is a 429 with this Retry-After: Metacontroller (pkg/hooks/webhook.go)
 * requeues the object after exactly that long and forgets its failures. Any other status is an
 * error to it: a SyncError event on the object, an error line in its log, and a retry after its
 * per-object exponential backoff (5 ms doubling per failure, up to 1000 s), which a 30 s outage
 * already grows to 20 s. Without Retry-After, a 429 is retried at once: a hot loop.
 */
export const RETRY_AFTER_SECONDS = '1';

export type Refuse = (request: FastifyRequest, reply: FastifyReply, status: number, message: string) => FastifyReply;

export interface GateDeps {
  readiness: () => { answersHooks: boolean; reason?: string; peerAnswers?: boolean };
  maxConcurrentHooks: number;
  hookBytesInFlight?: number;
  bodyLimit: number;
  authorize?: Authorize;
}

/**
 * Runs before the body is read, so that an unauthenticated or surplus caller costs no parsing
 * of a 16 MiB body. Probes and /metrics stay open for the kubelet and Prometheus.
 */
export function hookGate(deps: GateDeps, refuse: Refuse, closing: { now: boolean }) {
  const later = (request: FastifyRequest, reply: FastifyReply, message: string) =>
    refuse(request, reply.header('retry-after', RETRY_AFTER_SECONDS), 429, message);
  // The connection is closed only once the body has arrived (read and dropped, never parsed): a
  // caller still sending a large body into a closed connection gets a broken pipe, not our answer
  // (Go's client, Metacontroller's, did so for a third of 2 MB bodies), and that is an error again.
  const laterOnNewConnection = (request: FastifyRequest, reply: FastifyReply, message: string) => {
    reply.header('connection', 'close');
    const body = request.raw;
    if (body.readableEnded) return void later(request, reply, message);
    body.once('end', () => later(request, reply, message)).resume();
  };
  let inFlight = 0;
  let bytesInFlight = 0;
  const bytesBound = deps.hookBytesInFlight ?? Infinity;
  const leave = (request: FastifyRequest) => {
    if (request.admitted) {
      request.admitted = false;
      inFlight--;
      bytesInFlight -= request.admittedBytes;
    }
  };
  // A response's 'close' comes once, after it was sent or when its caller went away, which
  // neither onResponse (no 'finish' on a closed socket) nor onRequestAbort (only while the body is
  // read) sees once the handler waits for wadm: with them, such a call held its place for good.
  const closed = (request: FastifyRequest) => {
    request.closed = true;
    if (!request.working) leave(request);
  };
  return {
    // Fastify's callback form (an async hook costs a promise per call); refusing ends the call
    // here: the callback is not called.
    admit(request: FastifyRequest, reply: FastifyReply, done: () => void) {
      // Calls on kept-alive connections still arrive while the server closes: the retry, on a new
      // connection, reaches a replica that stays.
      if (closing.now) return laterOnNewConnection(request, reply, 'the service is shutting down; retry');
      if (deps.authorize && !deps.authorize(request.headers.authorization)) {
        return void refuse(request, reply.header('www-authenticate', 'Bearer'), 401, 'missing or wrong bearer token');
      }
      // Cut off from NATS while a peer may answer: the status stays as it is. Once a peer said it
      // is connected, the connection is closed, so that the retry is routed afresh, to the peer.
      // Not before: while no replica is ready the Service has no endpoint, a new connection is
      // refused, and that is an error to Metacontroller; the kept-alive one gets a 429 again.
      const readiness = deps.readiness();
      if (!readiness.answersHooks) {
        const message = `${readiness.reason ?? 'not answering'}; retry`;
        return readiness.peerAnswers ? laterOnNewConnection(request, reply, message) : void later(request, reply, message);
      }
      if (inFlight >= deps.maxConcurrentHooks) return void later(request, reply, 'too many hook calls in flight; retry');
      // A parsed body takes several times its size in the heap: a burst of large ones waits its
      // turn rather than exhaust the heap. One call alone always passes (up to the body limit).
      const bytes = declaredBytes(request.headers['content-length'], deps.bodyLimit);
      if (inFlight > 0 && bytesInFlight + bytes > bytesBound) {
        return void later(request, reply, `hook bodies in flight would exceed ${bytesBound} bytes (HOOK_BYTES_IN_FLIGHT); retry`);
      }
      inFlight++;
      bytesInFlight += bytes;
      request.admitted = true;
      request.admittedBytes = bytes;
      reply.raw.on('close', () => closed(request));
      done();
    },
    /**
     * A call's place is free once its response is over and its work has ended: a caller that
     * leaves while its call waits for wadm does not take the call's memory and requests with it.
     */
    whileWorking<T>(request: FastifyRequest, work: Promise<T>): Promise<T> {
      request.working = true;
      return work.finally(() => {
        request.working = false;
        if (request.closed) leave(request);
      });
    },
  };
}

/** Hoisted: a regular expression literal is a new object at every evaluation, on every call. */
const DIGITS = /^\d+$/;

/** What a body will take, before it is read: its Content-Length, or the body limit without one (chunked). */
export function declaredBytes(contentLength: string | undefined, bodyLimit: number): number {
  const declared = contentLength !== undefined && DIGITS.test(contentLength) ? Number(contentLength) : bodyLimit;
  return Math.min(declared, bodyLimit);
}
