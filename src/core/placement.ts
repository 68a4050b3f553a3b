// Why wadm cannot place an application, said in its own status: when a scaler failed because no
// host satisfies a spread's requirements, which requirement no host meets and which labels the
// lattice's hosts do have. Host labels are facts of the lattice, which every namespace allowed to
// use it may know; nothing of any other application is named. Pure: the hosts come from the shell.
import type { ApplicationSpec } from '../schema/application.js';
import { SCALER_TYPES } from '../schema/kit.js';
import { aliveHosts, describeLabels, hostLabels, matching, pairs, type HostsView } from './lattice-hosts.js';
import type { Verdict } from './reasons.js';

/** A spread with requirements, of one component: what a host must have to run its instances. */
export interface SpreadRequirement {
  component: string;
  spread: string;
  requirements: Readonly<Record<string, string>>;
}

/** wadm 0.21's words for "no host satisfies the spread": observed, and in its source (lattice-host-protocol.md §9). */
const UNPLACEABLE = /Spread requirement conflict|Could not satisfy spread|eligible hosts found/;

/** The spreads of a spec that name requirements (most name none). */
export function spreadRequirements(spec: ApplicationSpec): SpreadRequirement[] {
  const found: SpreadRequirement[] = [];
  for (const component of spec.components)
    for (const trait of component.traits ?? []) {
      if (!(SCALER_TYPES as readonly string[]).includes(trait.type)) continue;
      const spreads = (trait.properties as { spread?: { name: string; requirements?: Record<string, string> }[] }).spread ?? [];
      for (const spread of spreads)
        if (spread.requirements && Object.keys(spread.requirements).length > 0)
          found.push({ component: component.name, spread: spread.name, requirements: spread.requirements });
    }
  return found;
}

/** A scaler failed because wadm found no host for a spread: worth saying what the hosts have. */
export function unplaceable(verdict: Verdict): boolean {
  return verdict.reason === 'ScalerFailed' && UNPLACEABLE.test(verdict.message);
}

/**
 * The verdict, its message followed by what the hosts heard have: the requirements none meets, and
 * their labels. Unchanged when nobody listens to the lattice's hosts (a WasmCloudLattice makes the
 * service listen), or when none is heard.
 */
export function explainPlacement(
  verdict: Verdict,
  lattice: string,
  spreads: readonly SpreadRequirement[],
  hosts: HostsView | null,
  now: number,
): Verdict {
  if (hosts === null || !hosts.watching) return verdict;
  const alive = aliveHosts(hosts, now);
  const heard = now < hosts.since + hosts.defaultPeriodMs ? 'heard so far ' : '';
  if (alive.length === 0) return { ...verdict, message: `${verdict.message}; no host of lattice "${lattice}" ${heard}heartbeats` };
  // Each requirement no host meets, once, with the spreads that ask for it.
  const unmet = new Map<string, string[]>();
  for (const spread of spreads)
    if (matching(alive, spread.requirements) === 0) {
      const wanted = pairs(spread.requirements);
      unmet.set(wanted, [...(unmet.get(wanted) ?? []), `spread "${spread.spread}" of ${spread.component}`]);
    }
  const listed = [...unmet].map(([wanted, asking]) => `${wanted} (${asking.join(', ')})`);
  const none = listed.length > 0 ? `no host of lattice "${lattice}" has ${listed.join(', nor ')}; ` : '';
  const count = `${alive.length} host${alive.length === 1 ? '' : 's'}`;
  const have = `the ${count} ${heard}of lattice "${lattice}" have ${describeLabels(hostLabels(alive), alive)}`;
  return { ...verdict, message: `${verdict.message}; ${none}${have}` };
}
