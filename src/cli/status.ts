// `status NAME --lattice L`: asks wadm over NATS, as the hook does, and prints the status the hook
// would write for a resource whose desired version is the one wadm has deployed.
import { connect } from 'nats';
import yaml from 'js-yaml';
import type { Config } from '../service/config.js';
import { natsSecurityOptions } from '../lattice/nats-auth.js';
import { WadmUnavailableError } from '../lattice/errors.js';
import { WadmClient } from '../lattice/wadm-client.js';
import { OWNER_ANNOTATION } from '../core/names.js';
import { buildStatus, fromWadm } from '../core/status.js';
import { verdict } from '../core/reasons.js';
import type { Outcome } from './commands.js';

export async function status(name: string, lattice: string, config: Config, now = Date.now()): Promise<Outcome> {
  let nc;
  try {
    nc = await connect({ servers: config.natsServers, name: 'wasmcloud-metacontroller-cli', timeout: config.wadmTimeoutMs, ...natsSecurityOptions(config) });
  } catch (err) {
    return { stdout: '', stderr: `cannot connect to NATS at ${config.natsServers.join(',')}: ${(err as Error).message}\n`, code: 2 };
  }
  try {
    const client = new WadmClient({ connection: () => nc, apiPrefix: config.wadmApiPrefix, timeoutMs: config.wadmTimeoutMs });
    const versions = await client.versions(lattice, name);
    if (versions === null) return { stdout: '', stderr: `wadm has no application "${name}" in lattice "${lattice}"\n`, code: 1 };
    const owner = (await client.annotations(lattice, name))?.[OWNER_ANNOTATION] ?? '(none: not created by a WasmCloudApplication)';
    const deployed = versions.find((v) => v.deployed)?.version;
    const context = { generation: 0, lattice, previous: undefined, now };
    const answer = deployed
      ? buildStatus(context, fromWadm(deployed, lattice, { status: await client.status(lattice, name), predatesDeploy: false }))
      : buildStatus(context, verdict('Undeployed', `wadm has ${versions.length} version(s) of "${name}" and none is deployed`));
    const { observedGeneration: _generation, ...shown } = answer.status;
    const summary = { owner, versions: versions.map((v) => v.version), status: shown };
    return { stdout: yaml.dump(summary, { lineWidth: -1 }), stderr: '', code: 0 };
  } catch (err) {
    if (err instanceof WadmUnavailableError) return { stdout: '', stderr: `wadm did not answer (${err.reason}): ${err.message}\n`, code: 2 };
    throw err;
  } finally {
    await nc.close();
  }
}
