// `status NAME [--lattice L]`: asks wadm over NATS, as the hook does, and prints the status the hook
// would write for a resource whose desired version is the one wadm has deployed.
import yaml from 'js-yaml';
import type { Config } from '../plumbing/config.js';
import { OWNER_ANNOTATION } from '../core/names.js';
import { buildStatus, fromWadm } from '../core/status.js';
import { verdict } from '../core/reasons.js';
import type { Outcome } from './commands.js';
import { withWadm } from './wadm-session.js';

export function status(name: string, lattice: string, config: Config, now = Date.now()): Promise<Outcome> {
  return withWadm(config, async (client) => {
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
  });
}
