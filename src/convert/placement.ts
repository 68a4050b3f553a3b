// Scalers become replicas and host selectors. wadm scales each component on its own; a v2 workload
// places all its components together on one host, so one scaler (the first spreadscaler) decides
// for the whole workload and every other scaler is reported against it.
import { canonicalJson } from '../core/manifest.js';
import type { Component, ScalerProperties } from '../schema/application.js';
import { approximated, dropped, mapped, needsInput, type Finding } from './report.js';

export interface Placement {
  /** Appended to the deployment name when a weighted spread splits the application. */
  suffix: string | undefined;
  hostSelector: Record<string, string> | undefined;
  replicas: number;
}

export interface IndexedComponent {
  component: Component;
  /** Index in spec.components, for field paths. */
  index: number;
}

interface Scaler {
  type: string;
  properties: ScalerProperties;
  path: string;
  owner: string;
}

/** The one label a stock v2 host carries (wash host --host-group, default "default"). */
const HOSTGROUP = 'hostgroup';
/** wadm's default weight of a spread that names none. */
const DEFAULT_WEIGHT = 100;
const MEANING =
  'v1 instances capped the concurrent instances in the lattice, v2 replicas are copies of the whole workload, each on one host';

/**
 * `hostgroupFrom`: the requirement whose value becomes the `hostgroup` label in hostSelector, for
 * hosts grouped by it (--hostgroup-from-requirement).
 */
export function placementsOf(
  components: readonly IndexedComponent[],
  hostgroupFrom?: string,
): { placements: Placement[]; findings: Finding[] } {
  const scalers = components.flatMap(scalersOf);
  const lead = scalers.find((scaler) => scaler.type === 'spreadscaler');
  const placements =
    lead === undefined ? [{ suffix: undefined, hostSelector: undefined, replicas: 1 }] : spreadPlacements(lead, hostgroupFrom);
  const findings: Finding[] = [];
  if (lead !== undefined) findings.push(leadFinding(lead, placements), ...requirementFindings(lead, placements, hostgroupFrom));
  for (const scaler of scalers.filter((s) => s !== lead)) findings.push(followerFinding(scaler, lead, placements));
  for (const { component, index } of components) {
    if (scalers.some((s) => s.owner === component.name)) continue;
    findings.push(
      approximated(
        `spec.components[${index}].traits`,
        `no scaler: wadm never starts this component, v2 runs it in every replica of the workload`,
      ),
    );
  }
  return { placements, findings };
}

function scalersOf({ component, index }: IndexedComponent): Scaler[] {
  return (component.traits ?? []).flatMap((trait, t) =>
    trait.type === 'spreadscaler' || trait.type === 'daemonscaler'
      ? [
          {
            type: trait.type,
            properties: trait.properties as ScalerProperties,
            path: `spec.components[${index}].traits[${t}]`,
            owner: component.name,
          },
        ]
      : [],
  );
}

function instancesOf(properties: ScalerProperties): number {
  return properties.instances ?? properties.replicas ?? 0;
}

function spreadPlacements(lead: Scaler, hostgroupFrom: string | undefined): Placement[] {
  const spreads = lead.properties.spread ?? [];
  const instances = instancesOf(lead.properties);
  const selectorOf = (requirements: Record<string, string> | undefined) => hostSelectorOf(nonEmpty(requirements), hostgroupFrom);
  if (spreads.length <= 1) return [{ suffix: undefined, hostSelector: selectorOf(spreads[0]?.requirements), replicas: instances }];
  const shares = spreadShares(
    instances,
    spreads.map((s) => s.weight ?? DEFAULT_WEIGHT),
  );
  return spreads.map((spread, i) => ({ suffix: spread.name, hostSelector: selectorOf(spread.requirements), replicas: shares[i]! }));
}

/** The requirements as host labels, the chosen one as `hostgroup` (unless v1 already required a hostgroup). */
function hostSelectorOf(
  requirements: Record<string, string> | undefined,
  hostgroupFrom: string | undefined,
): Record<string, string> | undefined {
  // Own keys only: a KEY such as "constructor" is no requirement.
  if (requirements === undefined || hostgroupFrom === undefined) return requirements;
  if (!Object.hasOwn(requirements, hostgroupFrom) || Object.hasOwn(requirements, HOSTGROUP)) return requirements;
  const { [hostgroupFrom]: group, ...rest } = requirements;
  return { ...rest, [HOSTGROUP]: group! };
}

/** One finding per spread with requirements: stock hosts carry no label but hostgroup, so others place nothing. */
function requirementFindings(lead: Scaler, placements: Placement[], hostgroupFrom: string | undefined): Finding[] {
  return (lead.properties.spread ?? []).flatMap((spread, i) => {
    const selector = placements[i]?.hostSelector;
    if (selector === undefined) return [];
    const path = `${lead.path}.properties.spread[${i}].requirements`;
    const required = labelList(spread.requirements!);
    const missing = Object.fromEntries(Object.entries(selector).filter(([key]) => key !== HOSTGROUP));
    if (Object.keys(missing).length === 0) {
      const group = selector[HOSTGROUP]!;
      return [mapped(path, `${required} → hostSelector ${HOSTGROUP}=${group}: runs on hosts started with wash host --host-group ${group}`)];
    }
    const flag =
      hostgroupFrom === undefined ? `; or pass --hostgroup-from-requirement ${Object.keys(missing)[0]} to select hosts by host group` : '';
    return [
      needsInput(
        path,
        `${required} → spec.template.spec.hostSelector: a stock v2 host carries only the label ${HOSTGROUP}, so nothing is placed until hosts also carry ${labelList(missing)}${flag}`,
      ),
    ];
  });
}

const labelList = (labels: Record<string, string>) =>
  Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(', ');

/**
 * wadm's split of instances across weighted spreads: by weight, rounded down, and what rounding
 * lost handed out one by one from the heaviest spread down (a stable sort, as wadm's).
 */
export function spreadShares(instances: number, weights: readonly number[]): number[] {
  const total = weights.reduce((sum, w) => sum + w, 0);
  // wadm divides by the total weight; all-zero weights would be a division by zero there.
  const shares = weights.map((w) => (total === 0 ? 0 : Math.floor((instances * w) / total)));
  let left = instances - shares.reduce((sum, n) => sum + n, 0);
  const heaviestFirst = weights.map((w, i) => ({ w, i })).sort((a, b) => b.w - a.w);
  for (const { i } of heaviestFirst) {
    if (left <= 0) break;
    shares[i]! += 1;
    left -= 1;
  }
  return shares;
}

function leadFinding(lead: Scaler, placements: Placement[]): Finding {
  if (placements.length === 1) {
    return mapped(lead.path, `spreadscaler → spec.replicas ${placements[0]!.replicas} (${MEANING})`);
  }
  const split = placements.map((p) => `${p.suffix} ${p.replicas}`).join(', ');
  return approximated(
    lead.path,
    `${placements.length} weighted spreads → one WorkloadDeployment per spread with wadm's split of ${instancesOf(lead.properties)} (${split}); each scales on its own (${MEANING})`,
  );
}

function followerFinding(scaler: Scaler, lead: Scaler | undefined, placements: Placement[]): Finding {
  if (scaler.type === 'daemonscaler') {
    const replicas = placements.map((p) => p.replicas).join('/');
    return dropped(
      scaler.path,
      `daemonscaler: v2 has no per-host scaler; the workload runs ${replicas} replica(s), scale it with spec.replicas or an HPA`,
    );
  }
  if (lead !== undefined && canonicalJson(scaler.properties) === canonicalJson(lead.properties)) {
    return mapped(scaler.path, `same spreadscaler as component "${lead.owner}": shares the workload's replicas`);
  }
  return approximated(
    scaler.path,
    `a v2 workload places its components together: this component follows the spreadscaler of "${lead?.owner}" (${lead?.path})`,
  );
}

function nonEmpty(map: Record<string, string> | undefined): Record<string, string> | undefined {
  return map !== undefined && Object.keys(map).length > 0 ? map : undefined;
}
