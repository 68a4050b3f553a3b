// The real wadm (built by scripts/test-deps.sh from test/wadm) as a child process of a test,
// against a nats-server with JetStream. A missing binary is an error, never a skip: the
// end-to-end suite must not silently disappear.
import { fileURLToPath } from 'node:url';
import { connect } from 'nats';
import { freePort } from './ports.js';
import { binaryFrom, startProcess, untilReady } from './processes.js';

const DEFAULT_BIN = fileURLToPath(new URL('../wadm/target/release/wadm', import.meta.url));
const START_TIMEOUT_MS = 20_000;

export interface WadmProcess {
  /** wadm's log, most recent part. */
  output(): string;
  stop(): Promise<void>;
}

export function wadmBinary(env: NodeJS.ProcessEnv = process.env): string {
  return binaryFrom('WADM_BIN', { ...env, WADM_BIN: env['WADM_BIN'] || DEFAULT_BIN });
}

/** Starts wadm against `natsUrl` and resolves once its API answers. */
export async function startWadm(natsUrl: string, extraArgs: string[] = []): Promise<WadmProcess> {
  const adminPort = await freePort();
  // Memory streams unless the test asks otherwise (a NATS restart that must keep wadm's store).
  const streams = extraArgs.includes('--stream-persistence') ? [] : ['--stream-persistence', 'memory'];
  const args = ['--nats-server', new URL(natsUrl).host, ...streams, '--http-admin', `127.0.0.1:${adminPort}`, ...extraArgs];
  const wadm = startProcess('wadm', wadmBinary(), args, { ...process.env, RUST_LOG: process.env['WADM_RUST_LOG'] ?? 'info' });
  const nc = await connect({ servers: natsUrl });
  try {
    // Any answer will do, an error included: the API listens.
    const answers = () => nc.request('wadm.api.default.model.get', '', { timeout: 500 }).then(() => true);
    await untilReady(wadm, answers, START_TIMEOUT_MS);
  } catch (err) {
    await wadm.stop();
    throw err;
  } finally {
    await nc.close();
  }
  return wadm;
}
