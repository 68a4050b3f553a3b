// Which lattices of a lattice policy can collide in wadm 0.21: lattice `a` and lattice `a-b` are
// the pair that breaks (the model `b` of lattice `a` is stored under the key of lattice `a-b`'s
// index; see collisions.ts). Every lattice entry of a rule is a set of names: a literal lattice is
// itself, `{namespace}` is every namespace its rule's patterns match, `*` is every name. Each set
// is a glob, and a pair collides when some name of one, followed by `-` and more, is a name of
// the other: an intersection of two globs, decided exactly (a glob with `*` under `{namespace}`
// always collides with itself: `team-*` has `team-a` and `team-a-b`).
import { byCodeUnits } from './order.js';
import type { LatticePolicy } from './tenancy.js';

export interface LatticeSource {
  /** The lattices it stands for, as a glob (`*` any run of characters). */
  glob: string;
  /** How the policy says it, for the warning. */
  said: string;
}

export interface PrefixPair {
  shorter: LatticeSource;
  longer: LatticeSource;
}

/** Every lattice the policy can produce, once per distinct glob. */
function latticeSources(policy: LatticePolicy): LatticeSource[] {
  const sources = new Map<string, LatticeSource>();
  for (const rule of policy.rules) {
    for (const lattice of rule.lattices) {
      if (lattice === '{namespace}') {
        for (const ns of rule.namespaces) sources.set(ns, sources.get(ns) ?? { glob: ns, said: `{namespace} of namespaces "${ns}"` });
      } else {
        sources.set(lattice, { glob: lattice, said: lattice === '*' ? 'lattice "*" (any lattice)' : `lattice "${lattice}"` });
      }
    }
  }
  return [...sources.values()].sort((a, b) => byCodeUnits(a.glob, b.glob));
}

/** Pairs of producible lattices where one is the other followed by `-` and more, in a stable order. */
export function prefixPairs(policy: LatticePolicy): PrefixPair[] {
  const sources = latticeSources(policy);
  const pairs: PrefixPair[] = [];
  for (const shorter of sources) {
    for (const longer of sources) {
      if (globsIntersect(`${shorter.glob}-*`, longer.glob)) pairs.push({ shorter, longer });
    }
  }
  return pairs;
}

export function describePair(pair: PrefixPair): string {
  // A glob such as `team-*` or `*` produces both `x` and `x-…` by itself.
  if (pair.shorter === pair.longer)
    return `${pair.shorter.said} can produce a lattice and that lattice followed by "-…": an application of the first can take the wadm key of the second's index`;
  return `${pair.shorter.said} and ${pair.longer.said}: an application of the first can take the wadm key of the second's index`;
}

/** Whether two globs (`*` any run, possibly empty) match a common string. */
export function globsIntersect(p: string, q: string): boolean {
  const memo = new Map<number, boolean>();
  const meet = (i: number, j: number): boolean => {
    const k = i * (q.length + 1) + j;
    const known = memo.get(k);
    if (known !== undefined) return known;
    let result: boolean;
    if (i === p.length && j === q.length) result = true;
    else if (p[i] === '*') result = meet(i + 1, j) || (j < q.length && meet(i, j + 1));
    else if (q[j] === '*') result = meet(i, j + 1) || (i < p.length && meet(i + 1, j));
    else result = i < p.length && j < q.length && p[i] === q[j] && meet(i + 1, j + 1);
    memo.set(k, result);
    return result;
  };
  return meet(0, 0);
}
