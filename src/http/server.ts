// Builds the HTTP app from its dependencies. It never listens, reads the environment or touches
// NATS: src/main.ts does that, and tests call `inject` or listen on a free port themselves.
import Fastify, { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Authorize } from './auth.js';
import type { HookName, Hooks } from './hooks.js';
import type { Metrics } from '../service/metrics.js';
import { HookRequestSchema, type HookRequest } from '../schema/hook.js';
import { compile } from '../schema/validator.js';

export interface ServerDeps {
  hooks: Hooks;
  logger: Logger;
  metrics: Metrics;
  /** True while the service can do its job (connected to NATS). */
  isReady: () => boolean;
  /** Largest hook body accepted; Metacontroller sends whole objects with managedFields. */
  bodyLimit: number;
  /** Hook calls handled at once; more get 429 with Retry-After. */
  maxConcurrentHooks: number;
  /** Checks the Authorization header of hook calls; absent: hooks are open (see SECURITY.md). */
  authorize?: Authorize;
  /** Serve HTTPS with this key and certificate (PEM). */
  https?: { key: string; cert: string };
}

export const HOOK_PATHS: Record<HookName, string> = { sync: '/sync', finalize: '/finalize' };

const checkHookRequest = compile<HookRequest>(HookRequestSchema);

export function buildServer(deps: ServerDeps) {
  const app = Fastify({
    ...(deps.https ? { https: deps.https } : {}),
    loggerInstance: deps.logger,
    bodyLimit: deps.bodyLimit,
    // Resync calls are many and mostly no-ops: log what the hooks decide, not every request.
    logController: new LogController({ disableRequestLogging: true }),
    // Keys named __proto__ or constructor can be legitimate config keys in a spec. JSON.parse
    // makes them plain own properties, and no code of ours merges user objects into others.
    onProtoPoisoning: 'ignore',
    onConstructorPoisoning: 'ignore',
    return503OnClosing: true,
  });

  const gate = hookGate(deps);
  for (const hook of ['sync', 'finalize'] as const) {
    app.post(HOOK_PATHS[hook], { onRequest: gate.admit, onResponse: gate.release, onRequestAbort: gate.release }, (request, reply) =>
      handleHook(deps, hook, request, reply),
    );
  }
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    if (deps.isReady()) return { status: 'ready' };
    return reply.code(503).send({ status: 'not ready', reason: 'not connected to NATS' });
  });
  app.get('/metrics', async (_request, reply) => {
    reply.header('content-type', deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });

  app.setErrorHandler((error: Error & { statusCode?: number; code?: string }, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status >= 500) {
      // A bug: log it with its stack, tell the caller nothing it could misuse.
      request.log.error({ err: error }, 'unhandled error');
      return reply.code(500).send({ error: 'InternalError', message: 'internal error; see the service log' });
    }
    return reply.code(status).send({ error: error.code ?? 'BadRequest', message: error.message });
  });
  return app;
}

/**
 * Runs before the body is read, so that an unauthenticated or surplus caller costs no parsing
 * of a 16 MiB body. Probes and /metrics stay open for the kubelet and Prometheus.
 */
function hookGate(deps: ServerDeps) {
  let inFlight = 0;
  const admitted = new WeakSet<FastifyRequest>();
  return {
    async admit(request: FastifyRequest, reply: FastifyReply) {
      if (deps.authorize && !deps.authorize(request.headers.authorization)) {
        deps.metrics.hookRequests.inc({ hook: hookOf(request), code: '401' });
        return reply.code(401).header('www-authenticate', 'Bearer').send({ error: 'Unauthorized', message: 'missing or wrong bearer token' });
      }
      if (inFlight >= deps.maxConcurrentHooks) {
        deps.metrics.hookRequests.inc({ hook: hookOf(request), code: '429' });
        // Metacontroller requeues after Retry-After; without it, it retries at once (a hot loop).
        return reply.code(429).header('retry-after', '1').send({ error: 'TooManyRequests', message: 'too many hook calls in flight; retry' });
      }
      inFlight++;
      admitted.add(request);
    },
    async release(request: FastifyRequest) {
      if (admitted.delete(request)) inFlight--;
    },
  };
}

function hookOf(request: FastifyRequest): HookName {
  return request.url.startsWith(HOOK_PATHS.finalize) ? 'finalize' : 'sync';
}

async function handleHook(deps: ServerDeps, hook: HookName, request: FastifyRequest, reply: FastifyReply) {
  const stop = deps.metrics.hookDuration.startTimer({ hook });
  try {
    const body = request.body;
    if (!checkHookRequest(body)) {
      const problems = checkHookRequest.problems(body, 'body', 3);
      deps.metrics.hookRequests.inc({ hook, code: '400' });
      return await reply.code(400).send({ error: 'BadRequest', message: `not a Metacontroller hook request: ${problems.join('; ')}` });
    }
    // request.log is a child of our pino root (loggerInstance), typed by Fastify more loosely.
    const { json: response, etag } = await deps.hooks.answer(hook, body, request.log as Logger);
    // Metacontroller's etag support (webhook.etag): it sends the ETag of the answer it cached; an
    // unchanged answer is then a bodyless 304, which it applies as if the cached body had come.
    reply.header('etag', etag);
    if (request.headers['if-none-match'] === etag) {
      deps.metrics.hookRequests.inc({ hook, code: '304' });
      return await reply.code(304).send();
    }
    deps.metrics.hookRequests.inc({ hook, code: '200' });
    return await reply.code(200).header('content-type', 'application/json; charset=utf-8').send(response);
  } catch (err) {
    deps.metrics.hookRequests.inc({ hook, code: '500' });
    throw err;
  } finally {
    stop();
  }
}
