// The NATS session of the commands that ask wadm (status, diff, list) or listen (hosts): the service's own NATS_*
// configuration, one connection per command, and the same exit codes for the same failures
// (2 when NATS or wadm cannot be reached).
import { connect, type NatsConnection } from 'nats';
import type { Config } from '../plumbing/config.js';
import { natsSecurityOptions } from '../lattice/nats-auth.js';
import { WadmUnavailableError } from '../lattice/errors.js';
import { WadmClient } from '../lattice/wadm-client.js';
import type { Outcome } from './commands.js';

export function withWadm(config: Config, run: (client: WadmClient) => Promise<Outcome>): Promise<Outcome> {
  return withNats(config, async (nc) => {
    try {
      return await run(new WadmClient({ connection: () => nc, apiPrefix: config.wadmApiPrefix, timeoutMs: config.wadmTimeoutMs }));
    } catch (err) {
      if (err instanceof WadmUnavailableError)
        return { stdout: '', stderr: `wadm did not answer (${err.reason}): ${err.message}\n`, code: 2 };
      throw err;
    }
  });
}

/** One NATS connection for a command, with the service's NATS settings; exit 2 when it cannot be made. */
export async function withNats(config: Config, run: (nc: NatsConnection) => Promise<Outcome>): Promise<Outcome> {
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers: config.natsServers,
      name: 'wasmcloud-metacontroller-cli',
      timeout: config.wadmTimeoutMs,
      ...natsSecurityOptions(config),
    });
  } catch (err) {
    return { stdout: '', stderr: `cannot connect to NATS at ${config.natsServers.join(',')}: ${(err as Error).message}\n`, code: 2 };
  }
  try {
    return await run(nc);
  } finally {
    await nc.close();
  }
}
