// `diff FILE` and `list`: what a lattice's wadm holds, seen from the resources. diff is for
// reviewing a GitOps pull request (what would applying this file change in wadm?); list is for
// finding models to adopt (which are not owned by any WasmCloudApplication?).
import yaml from 'js-yaml';
import type { Config } from '../plumbing/config.js';
import { OWNER_ANNOTATION } from '../core/names.js';
import { renderManifest } from '../core/manifest.js';
import { byCodeUnits } from '../core/order.js';
import { check, readAll, type Options, type Outcome } from './commands.js';
import { unifiedDiff } from './unified-diff.js';
import { withWadm } from './wadm-session.js';
import { WadmUnavailableError } from '../lattice/errors.js';

/** YAML with sorted keys, so that a diff shows changes, not the key order of each writer. */
const canonical = (value: unknown): string => (value === null ? '' : yaml.dump(value, { sortKeys: true, lineWidth: -1, noRefs: true }));

/**
 * The rendered manifest against the manifest of the deployed version (nothing when none is
 * deployed), as a unified diff; exit 1 when they differ, 0 when applying the file changes nothing.
 */
export async function diff(file: string, lattice: string | undefined, options: Options, config: Config): Promise<Outcome> {
  const docs = readAll(file);
  if (docs.length !== 1)
    return { stdout: '', stderr: `${file}: expected one WasmCloudApplication, found ${docs.length} documents\n`, code: 2 };
  const checked = check(docs[0]!, options);
  if (!checked.ok)
    return { stdout: '', stderr: checked.problems.map((p) => `${docs[0]!.where}: ${checked.id}: ${p}`).join('\n') + '\n', code: 2 };
  const rendered = renderManifest(checked.validation.app);
  const name = rendered.manifest.metadata.name;
  const target = lattice ?? checked.validation.app.lattice;
  return withWadm(config, async (client) => {
    const deployed = (await client.versions(target, name))?.find((v) => v.deployed)?.version;
    const current = deployed === undefined ? null : await client.manifest(target, name, deployed);
    const from = current === null ? `/dev/null` : `wadm ${target}/${name} ${deployed}`;
    const text = unifiedDiff(canonical(current), canonical(JSON.parse(rendered.body)), from, `${file} ${rendered.version}`);
    return { stdout: text, stderr: '', code: text === '' ? 0 : 1 };
  });
}

/**
 * wadm answers a lattice's list in one NATS message, and cannot send one larger than max_payload:
 * a lattice of a few thousand applications cannot be listed (wash app list has the same limit).
 */
const TOO_MANY = (lattice: string) =>
  `wadm did not send the list of lattice "${lattice}" in time. wadm answers it in one NATS message, which it cannot send once the lattice holds more applications than fit in the NATS server's max_payload (a few thousand; \`wash app list\` has the same limit); ask about one application with: wasmcloud-metacontroller status NAME --lattice ${lattice}\n`;

/** Every model of the lattice with its deployed version and its owner (or "unowned"), by name. */
export function list(lattice: string, config: Config): Promise<Outcome> {
  return withWadm(config, async (client) => {
    const listed = await client.list(lattice).catch((err: unknown) => {
      if (err instanceof WadmUnavailableError && err.reason === 'Timeout') return undefined;
      throw err;
    });
    if (listed === undefined) return { stdout: '', stderr: TOO_MANY(lattice), code: 2 };
    const models = listed.sort((a, b) => byCodeUnits(a.name, b.name));
    const rows = [['NAME', 'DEPLOYED', 'LATEST', 'OWNER']];
    for (const model of models) {
      // The owner of the newest version: the one the hook checks first after the deployed one.
      const owner = (await client.annotations(lattice, model.name))?.[OWNER_ANNOTATION] ?? 'unowned';
      rows.push([model.name, model.deployed ?? '-', model.version, owner]);
    }
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    const stdout = rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('   ')).join('\n') + '\n';
    return { stdout, stderr: '', code: 0 };
  });
}
