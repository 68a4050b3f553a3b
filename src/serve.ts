// Runs the service as a process: read config, start, listen, shut down cleanly on SIGTERM.
import { loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { createService, type Service } from './service.js';

export async function serve(env: Record<string, string | undefined>): Promise<void> {
  const loaded = loadConfig(env);
  if (!loaded.ok) {
    process.stderr.write(`wasmcloud-metacontroller: invalid configuration: ${loaded.errors.join('; ')}\n`);
    process.exit(1);
  }
  const { config } = loaded;
  const logger = createLogger(config.logLevel, undefined, config.logFormat);
  let service: Service;
  try {
    service = createService(config, logger);
  } catch (err) {
    // A policy, token or certificate file that cannot be read or parsed at start.
    process.stderr.write(`wasmcloud-metacontroller: ${(err as Error).message}\n`);
    process.exit(1);
  }

  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, delayMs: config.shutdownDelayMs }, 'shutting down: readiness off, finishing hook calls in flight');
    await service.shutdown(config.shutdownDelayMs);
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  try {
    await service.app.listen({ port: config.port, host: config.host });
  } catch (err) {
    // The port is taken or not allowed: the same one line and exit code as the failures above.
    process.stderr.write(`wasmcloud-metacontroller: cannot listen on ${config.host}:${config.port}: ${(err as Error).message}\n`);
    process.exit(1);
  }
}
