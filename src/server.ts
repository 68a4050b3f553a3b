// The service: a Fastify server that gets Metacontroller's hooks (sync.ts answers them), with its
// health, readiness and metrics endpoints. The gates and framework details live in http/. It is
// built from its dependencies and never listens, reads the environment or touches NATS: main.ts
// does that (through wiring/), and tests call `inject` or listen on a free port themselves.
import Fastify, { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Authorize } from './http/auth.js';
import type { Answer } from './http/answers.js';
import type { Hooks } from './sync.js';
import type { LatticeHook } from './lattice/lattice-hook.js';
import type { Metrics } from './plumbing/metrics.js';
import {
  HookRequestSchema,
  LatticeHookRequestSchema,
  type HookLabel,
  type HookName,
  type HookRequest,
  type LatticeHookRequest,
} from './schema/hook.js';
import { answerOf } from './http/answers.js';
import { compile } from './schema/validator.js';
import { describeFrameworkError, errorBody, rejectionRecorder } from './http/rejections.js';
import { hookGate, type Refuse } from './http/hook-gate.js';
import { requestLoggerFactory } from './http/request-logger.js';

export interface ServerDeps {
  hooks: Hooks;
  /** The WasmCloudLattice's sync hook (LATTICE_HOOK_PATH); absent: that path answers 404. */
  latticeHook?: Pick<LatticeHook, 'answer'>;
  logger: Logger;
  metrics: Metrics;
  /** Whether this replica is ready and answers hooks (wiring/readiness.ts), and whether NATS is connected. */
  readiness: () => { ready: boolean; answersHooks: boolean; reason?: string; peerAnswers?: boolean };
  natsConnected: () => boolean;
  /** Largest hook body accepted; Metacontroller sends whole objects with managedFields. */
  bodyLimit: number;
  /** Hook calls handled at once; more get 429 with Retry-After. */
  maxConcurrentHooks: number;
  /** Bytes of hook bodies handled at once (Content-Length); above, 429 unless none is in flight. Absent: no such bound. */
  hookBytesInFlight?: number;
  /** Checks the Authorization header of hook calls; absent: hooks are open (see SECURITY.md). */
  authorize?: Authorize;
  /** Serve HTTPS with this key and certificate (PEM). */
  https?: { key: string; cert: string };
  /** The clock that paces the rejection log lines (tests inject one). */
  now?: () => number;
  /** Time to receive a whole request (REQUEST_TIMEOUT_MS by default; tests shorten it). */
  requestTimeoutMs?: number;
}

/**
 * A hook call must have arrived whole within this time, or its connection is closed (408 if
 * nothing was answered yet). Metacontroller sends at once and gives up after its own 10 s; without
 * a bound (Fastify's default), a caller trickling a body held a hook gate place for good.
 */
export const REQUEST_TIMEOUT_MS = 30_000;

/**
 * How long an idle kept-alive connection stays open. Metacontroller's webhook client is Go's
 * default transport, which keeps an idle connection for 90 s and sends the next call on it: a
 * server that closes sooner (Fastify's default is 72 s) can close it as a call is sent, which
 * Metacontroller sees as a connection reset, an error, and backs off. Above 90 s the client always
 * closes first. The headers and request timeouts start with a request's first byte, not with the
 * connection's idle time (Node 18 and later), so they need not grow with it.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 100_000;

export const HOOK_PATHS: Record<HookName, string> = { sync: '/sync', finalize: '/finalize' };

/** Where the second CompositeController (WasmCloudLattice) sends its sync calls. */
export const LATTICE_HOOK_PATH = '/lattice/sync';

const checkHookRequest = compile<HookRequest>(HookRequestSchema);
const checkLatticeRequest = compile<LatticeHookRequest>(LatticeHookRequestSchema);

export function buildServer(deps: ServerDeps) {
  const requestTimeout = deps.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  // Node looks for overdue requests every connectionsCheckingInterval (30 s by default), and
  // enforces requestTimeout only with headersTimeout (60 s by default) no longer than it.
  const serverOptions = {
    connectionsCheckingInterval: Math.max(50, Math.min(requestTimeout / 4, 30_000)),
    headersTimeout: Math.min(requestTimeout, 60_000),
  };
  const app = Fastify({
    ...(deps.https ? { https: { ...deps.https, ...serverOptions } } : { http: serverOptions }),
    requestTimeout,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    loggerInstance: deps.logger,
    bodyLimit: deps.bodyLimit,
    // Resync calls are many and mostly no-ops: log what the hooks decide, not every request.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: requestLoggerFactory,
    // Keys named __proto__ or constructor can be legitimate config keys in a spec. JSON.parse
    // makes them plain own properties, and no code of ours merges user objects into others.
    onProtoPoisoning: 'ignore',
    onConstructorPoisoning: 'ignore',
    // Fastify's own 503 would start Metacontroller's backoff; the hook gate's closing check
    // answers 429 with Retry-After instead (http/hook-gate.ts).
    return503OnClosing: false,
  });

  // Hook calls are JSON; a text body is a misconfigured caller (415), not a malformed request.
  app.removeContentTypeParser('text/plain');
  const reject = rejectionRecorder(deps.metrics, deps.logger, deps.now ?? Date.now);
  const refuse = (request: FastifyRequest, reply: FastifyReply, status: number, message: string) => {
    const body = errorBody(status, message);
    const hook = hookAt(request.url);
    if (hook) reject(hook, status, body.error, request.ip);
    return reply.code(status).send(body);
  };

  const closing = { now: false };
  app.addHook('preClose', async () => void (closing.now = true));

  // A field every request has from the start (one shape for all), cheaper than a WeakSet of them.
  app.decorateRequest('admitted', false);
  app.decorateRequest('admittedBytes', 0);
  app.decorateRequest('working', false);
  app.decorateRequest('closed', false);
  app.decorateRequest('arrivedAt', 0);
  const gate = hookGate(deps, refuse, closing);
  for (const hook of ['sync', 'finalize'] as const) {
    app.post(HOOK_PATHS[hook], { onRequest: [arrived, gate.admit] }, (request, reply) => {
      const answered = handleHook(deps, hook, request, reply, refuse);
      return answered && gate.whileWorking(request, answered);
    });
  }
  const { latticeHook } = deps;
  if (latticeHook)
    app.post(LATTICE_HOOK_PATH, { onRequest: [arrived, gate.admit] }, (request, reply) => {
      const answered = handleLatticeHook(deps, latticeHook, request, reply, refuse);
      return answered && gate.whileWorking(request, answered);
    });
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const { ready, reason } = deps.readiness();
    if (ready) return reason === undefined ? { status: 'ready' } : { status: 'ready', reason };
    return reply.code(503).send({ status: 'not ready', reason });
  });
  // Asked by peers cut off from NATS (wiring/readiness.ts): one word, nothing about any tenant.
  app.get('/natsz', async (_request, reply) => {
    const connected = deps.natsConnected();
    return reply.code(connected ? 200 : 503).send({ connected });
  });
  app.get('/metrics', async (_request, reply) => {
    reply.header('content-type', deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });

  app.setNotFoundHandler((request, reply) => {
    // A hook path exists for POST only: say so, so that a misconfigured caller learns why.
    if (hookAt(request.url))
      return refuse(
        request,
        reply.header('allow', 'POST'),
        405,
        `${request.method} is not allowed on ${request.url.split('?')[0]}; use POST`,
      );
    return reply.code(404).send(errorBody(404, `no route ${request.method} ${request.url.split('?')[0]}`));
  });
  app.setErrorHandler((error: Error & { statusCode?: number; code?: string }, request, reply) => {
    const { status, body } = describeFrameworkError(error, deps.bodyLimit);
    if (status >= 500) {
      // A bug: log it with its stack, tell the caller nothing it could misuse (handleHook counted it).
      request.log.error({ err: error }, 'unhandled error');
      return reply.code(500).send(body);
    }
    const hook = hookAt(request.url);
    if (hook) reject(hook, status, body.error, request.ip);
    return reply.code(status).send(body);
  });
  return app;
}

/**
 * A hook call's budget counts from here, its headers read and its body not yet: Metacontroller's
 * timeout runs while the body is read and parsed (a large parent on a busy CPU takes a while).
 * Fastify's callback form: no promise per call.
 */
function arrived(request: FastifyRequest, _reply: FastifyReply, done: () => void): void {
  request.arrivedAt = performance.now();
  done();
}

/** The hook a URL names (query strings aside), or undefined for every other path. */
function hookAt(url: string): HookLabel | undefined {
  const path = url.split('?')[0];
  if (path === LATTICE_HOOK_PATH) return 'lattice';
  return (Object.keys(HOOK_PATHS) as HookName[]).find((hook) => HOOK_PATHS[hook] === path);
}

/** Answers a WasmCloudLattice's sync: validated like the application's hooks, answered with an ETag too. */
function handleLatticeHook(
  deps: ServerDeps,
  latticeHook: Pick<LatticeHook, 'answer'>,
  request: FastifyRequest,
  reply: FastifyReply,
  refuse: Refuse,
): Promise<FastifyReply> | undefined {
  const started = performance.now();
  const finished = () => deps.metrics.observeHookDuration('lattice', (performance.now() - started) / 1000);
  const body = request.body;
  if (!checkLatticeRequest(body)) {
    refuse(request, reply, 400, `not a Metacontroller hook request: ${checkLatticeRequest.problems(body, 'body', 3).join('; ')}`);
    return void finished();
  }
  return latticeHook.answer(body, request.log as Logger, request.arrivedAt).then(
    (response) => sendAnswer(deps, 'lattice', request, reply, answerOf(response), finished),
    (err: unknown) => {
      deps.metrics.countHookCall('lattice', '500');
      finished();
      throw err;
    },
  );
}

/** Answers a hook call; a settled answer from memory is sent at once, without a promise. */
function handleHook(
  deps: ServerDeps,
  hook: HookName,
  request: FastifyRequest,
  reply: FastifyReply,
  refuse: Refuse,
): Promise<FastifyReply> | undefined {
  const started = performance.now();
  const finished = () => deps.metrics.observeHookDuration(hook, (performance.now() - started) / 1000);
  const failed = (err: unknown): never => {
    deps.metrics.countHookCall(hook, '500');
    finished();
    throw err;
  };
  const body = request.body;
  if (!checkHookRequest(body)) {
    const problems = checkHookRequest.problems(body, 'body', 3);
    refuse(request, reply, 400, `not a Metacontroller hook request: ${problems.join('; ')}`);
    return void finished();
  }
  const send = (answer: Answer): FastifyReply => sendAnswer(deps, hook, request, reply, answer, finished);
  let answered: Answer | Promise<Answer>;
  try {
    // request.log is a child of our pino root (loggerInstance), typed by Fastify more loosely.
    // Metacontroller closes the connection when it stops waiting: nothing more is done for it.
    answered = deps.hooks.answer(hook, body, request.log as Logger, {
      gone: () => request.raw.socket.destroyed,
      arrivedAt: request.arrivedAt,
    });
  } catch (err) {
    return failed(err);
  }
  if (answered instanceof Promise) return answered.then(send, failed);
  send(answered);
  return undefined;
}

/**
 * Sends a hook's answer with its ETag. Metacontroller's etag support (webhook.etag): it sends the
 * ETag of the answer it cached; an unchanged answer is then a bodyless 304, which it applies as if
 * the cached body had come.
 */
function sendAnswer(
  deps: ServerDeps,
  hook: HookLabel,
  request: FastifyRequest,
  reply: FastifyReply,
  { json, etag }: Answer,
  finished: () => void,
): FastifyReply {
  reply.header('etag', etag);
  const unchanged = request.headers['if-none-match'] === etag;
  deps.metrics.countHookCall(hook, unchanged ? '304' : '200');
  if (unchanged) reply.code(304).send();
  else reply.code(200).header('content-type', 'application/json; charset=utf-8').send(json);
  finished();
  return reply;
}
