#!/usr/bin/env node
// The one entry of the program (`node dist/main.js`, the image, the `wasmcloud-metacontroller`
// command): reads the command line and the configuration once, then either runs a CLI command or
// builds the service and owns the process — listening, signals and exit codes.
import { parseCommandLine, USAGE } from './cli/index.js';
import { createService, hookBytesInFlight, type Service } from './wiring/build.js';
import { runtimeReclaimDeps } from './plumbing/memory-reclaim.js';
import { loadConfig, type Config } from './plumbing/config.js';
import { createLogger } from './plumbing/logger.js';
import { VERSION } from './plumbing/version.js';

const NAME = 'wasmcloud-metacontroller';
const SIGNAL_NUMBERS: Partial<Record<NodeJS.Signals, number>> & Record<'SIGINT' | 'SIGTERM', number> = { SIGINT: 2, SIGTERM: 15 };

async function main(argv: string[]): Promise<void> {
  const invocation = parseCommandLine(argv);
  if (invocation.command === 'help') return void process.stdout.write(USAGE);
  if (invocation.command === 'version') return void process.stdout.write(`${VERSION}\n`);
  const loaded = loadConfig(process.env);
  if (!loaded.ok) {
    // The service exits 1 (a bad Deployment); a CLI command 2 (a usage problem).
    const serving = invocation.command === 'serve';
    process.stderr.write(`${serving ? `${NAME}: ` : ''}invalid configuration: ${loaded.errors.join('; ')}\n`);
    return void (process.exitCode = serving ? 1 : 2);
  }
  if (invocation.command === 'serve') return serve(loaded.config);
  const outcome = await invocation.run(loaded.config);
  process.stdout.write(outcome.stdout);
  process.stderr.write(outcome.stderr);
  process.exitCode = outcome.code;
}

/**
 * Runs the service until SIGTERM or SIGINT: readiness off, calls in flight finish, exit 0. A second
 * signal during that drain exits at once (130 for SIGINT, 143 for SIGTERM).
 */
async function serve(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel, undefined, config.logFormat);
  // memoryReclaim: whether node runs with --expose-gc, as the image does (src/plumbing/memory-reclaim.ts).
  // hookBytesInFlight: the bound on hook bodies in flight, derived from V8's heap limit unless set.
  logger.info(
    {
      version: VERSION,
      node: process.version,
      memoryReclaim: runtimeReclaimDeps() !== undefined,
      hookBytesInFlight: hookBytesInFlight(config),
    },
    `starting ${NAME} ${VERSION}`,
  );
  let service: Service;
  try {
    service = createService(config, logger);
  } catch (err) {
    // A policy, token or certificate file that cannot be read or parsed at start.
    process.stderr.write(`${NAME}: ${(err as Error).message}\n`);
    return void (process.exitCode = 1);
  }
  let stopping = false;
  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    if (stopping) {
      // A second Ctrl-C means "now": skip the drain, exit like a shell does (128 + signal number).
      logger.warn({ signal }, 'second signal: exiting at once');
      process.exit(128 + (SIGNAL_NUMBERS[signal] ?? 0));
    }
    stopping = true;
    logger.info({ signal, delayMs: config.shutdownDelayMs }, 'shutting down: readiness off, finishing hook calls in flight');
    await service.shutdown(config.shutdownDelayMs);
    logger.info('stopped');
    process.exit(0);
  };
  const stopOn = (signal: NodeJS.Signals) => () => {
    stop(signal).catch((err: unknown) => {
      logger.error({ err: (err as Error).message }, 'shutdown failed');
      process.exit(1);
    });
  };
  process.on('SIGTERM', stopOn('SIGTERM'));
  process.on('SIGINT', stopOn('SIGINT'));
  // The last resort: every promise in src/ is awaited or has a handler (test/unit/promises.test.ts
  // checks it), so one that is not is a bug; logged and counted, it must not end the process and
  // every hook with it, as Node's default would.
  process.on('unhandledRejection', (reason) => {
    service.metrics.unhandledRejections.inc();
    logger.error(
      { err: reason instanceof Error ? (reason.stack ?? reason.message) : String(reason) },
      'unhandled promise rejection (a bug: please report it)',
    );
  });
  try {
    await service.app.listen({ port: config.port, host: config.host });
  } catch (err) {
    // The port is taken or not allowed: one line and exit 1, like every failure at start.
    process.stderr.write(`${NAME}: cannot listen on ${config.host}:${config.port}: ${(err as Error).message}\n`);
    process.exit(1);
  }
}

try {
  await main(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`${NAME}: ${(err as Error).message}\n`);
  process.exitCode = 2;
}
