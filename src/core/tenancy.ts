// Which namespaces may deploy to which lattices. The hook decides what runs on a lattice, so a
// namespace must not be able to name any lattice it likes. Without a policy file only
// DEFAULT_LATTICE is allowed; with one, only what it grants.
import { Type, type Static } from '@sinclair/typebox';
import yaml from 'js-yaml';
import { compile } from '../schema/validator.js';

export interface Tenancy {
  defaultLattice: string;
  /** What decides: DEFAULT_LATTICE alone (no policy file) or the rules of a policy file. */
  rule: 'default-only' | 'policy';
  allows(namespace: string, lattice: string): boolean;
  /** The policy grants this lattice by its literal name (not only through `*` or `{namespace}`). */
  names?(lattice: string): boolean;
  /** Changes (by identity) whenever the policy does, so that answers computed under another policy are not reused. */
  revision?(): unknown;
  /** The namespaces that may use this lattice, as the rules name them (`*` globs), sorted; `*` alone when every one may. */
  namespacesFor?(lattice: string): string[];
}

/** Why a namespace may not target a lattice: the rule that refused it, for the resource's message. */
export type LatticeRefusal = { rule: 'default-only'; defaultLattice: string } | { rule: 'policy' };

/** Undefined when the namespace may target the lattice; otherwise the rule that refused it. */
export function refusal(tenancy: Tenancy, namespace: string, lattice: string): LatticeRefusal | undefined {
  if (tenancy.allows(namespace, lattice)) return undefined;
  return tenancy.rule === 'policy' ? { rule: 'policy' } : { rule: 'default-only', defaultLattice: tenancy.defaultLattice };
}

const NAMESPACE_PATTERN = '^[a-z0-9*]([-a-z0-9*]*[a-z0-9*])?$';
const LATTICE_PATTERN = '^([-\\w]+|\\*|\\{namespace\\})$';

export const LatticePolicySchema = Type.Object(
  {
    rules: Type.Array(
      Type.Object(
        {
          namespaces: Type.Array(Type.String({ pattern: NAMESPACE_PATTERN }), {
            minItems: 1,
            description: 'Namespace names; `*` matches any run of characters (`team-*`, `*`).',
          }),
          lattices: Type.Array(Type.String({ pattern: LATTICE_PATTERN }), {
            minItems: 1,
            description: "Lattices these namespaces may target; `{namespace}` is the namespace's own name, `*` any lattice.",
          }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type LatticePolicy = Static<typeof LatticePolicySchema>;

const checkPolicy = compile<LatticePolicy>(LatticePolicySchema);

export function defaultOnly(defaultLattice: string): Tenancy {
  return {
    defaultLattice,
    rule: 'default-only',
    allows: (_namespace, lattice) => lattice === defaultLattice,
    namespacesFor: (lattice) => (lattice === defaultLattice ? ['*'] : []),
  };
}

/** A namespace name: what `{namespace}` can stand for (a lattice id with capitals or `_` is no namespace's). */
const NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function parsePolicy(text: string): LatticePolicy {
  const policy: unknown = yaml.load(text);
  if (!checkPolicy(policy)) throw new Error(`invalid lattice policy: ${checkPolicy.problems(policy, 'policy').join('; ')}`);
  return policy;
}

export function fromPolicy(policy: LatticePolicy, defaultLattice: string): Tenancy {
  const rules = policy.rules.map((rule) => ({ namespaces: rule.namespaces.map(glob), lattices: rule.lattices }));
  const literal = new Set(policy.rules.flatMap((rule) => rule.lattices.filter((l) => l !== '*' && l !== '{namespace}')));
  return {
    defaultLattice,
    rule: 'policy',
    names: (lattice) => literal.has(lattice),
    namespacesFor(lattice) {
      const found = new Set<string>();
      for (const rule of policy.rules) {
        if (rule.lattices.includes('*') || rule.lattices.includes(lattice)) for (const pattern of rule.namespaces) found.add(pattern);
        else if (
          rule.lattices.includes('{namespace}') &&
          NAMESPACE_NAME.test(lattice) &&
          rule.namespaces.some((p) => glob(p).test(lattice))
        )
          found.add(lattice);
      }
      return found.has('*') ? ['*'] : [...found].sort();
    },
    allows(namespace, lattice) {
      return rules.some(
        (rule) =>
          rule.namespaces.some((pattern) => pattern.test(namespace)) &&
          rule.lattices.some((allowed) => allowed === '*' || allowed === lattice || (allowed === '{namespace}' && lattice === namespace)),
      );
    },
  };
}

function glob(pattern: string): RegExp {
  return new RegExp(`^${pattern.split('*').map(escape).join('.*')}$`);
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
