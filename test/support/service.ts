// Runs the whole service in-process (the same wiring as src/main.ts) on a free port, with its
// log lines captured as parsed JSON, for tests that drive it over real HTTP.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/plumbing/config.js';
import { createLogger } from '../../src/plumbing/logger.js';
import { createService, type Service, type ServiceOptions } from '../../src/wiring/build.js';
import { jsonLogSink } from './logs.js';
import { until } from './wait.js';

export interface RunningService {
  service: Service;
  url: string;
  logs: Record<string, unknown>[];
  /** Resolves once the service reports a NATS connection. */
  connected(timeoutMs?: number): Promise<void>;
}

/** Anything that runs cleanups: a node:test context, or a CleanupStack. */
export interface Cleanups {
  after(fn: () => unknown): unknown;
}

/** Cleanups run last first, when `run()` is called: for a suite's before/after, or a stack within one test. */
export class CleanupStack implements Cleanups {
  private readonly stack: (() => unknown)[] = [];

  after(fn: () => unknown): void {
    this.stack.push(fn);
  }

  async run(): Promise<void> {
    for (const fn of this.stack.splice(0).reverse()) await fn();
  }
}

/** Tests use many lattices; the tenancy tests set a policy of their own. */
export function allowAllPolicy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'policy-'));
  const path = join(dir, 'policy.yaml');
  writeFileSync(path, 'rules:\n  - namespaces: ["*"]\n    lattices: ["*"]\n');
  return path;
}

export async function startService(t: Cleanups, env: Record<string, string>, options: ServiceOptions = {}): Promise<RunningService> {
  const loaded = loadConfig({ PORT: '8080', LOG_LEVEL: 'debug', LATTICE_POLICY_FILE: allowAllPolicy(), ...env });
  if (!loaded.ok) throw new Error(loaded.errors.join('; '));
  const { sink, lines: logs } = jsonLogSink();
  const service = createService(loaded.config, createLogger(loaded.config.logLevel, sink), { natsRetryDelayMs: 100, ...options });
  t.after(() => service.shutdown());
  const address = await service.app.listen({ port: 0, host: '127.0.0.1' });
  return {
    service,
    url: address,
    logs,
    async connected(timeoutMs = 10_000) {
      await until(() => service.link.isConnected(), { what: 'the service connects to NATS', timeoutMs });
    },
  };
}
