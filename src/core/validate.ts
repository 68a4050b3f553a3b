// Turns a hook's parent into a ValidSpec (the spec, ready to render), or into problems that each
// name the field to fix; the application's Identity either way. Mirrors wadm's own manifest validation so a bad spec never reaches NATS.
import { ApplicationSpecSchema, DEFAULT_REVISION_HISTORY_LIMIT, type ApplicationSpec } from '../schema/application.js';
import type { Parent } from '../schema/hook.js';
import { compile } from '../schema/validator.js';
import { ADOPT_ANNOTATION, isPassedThrough, isValidOamKey, isWadmName, VERSION_ANNOTATION } from './names.js';
import { checkComponents } from './components.js';

export interface ResourceRef {
  namespace: string;
  name: string;
  generation: number;
}

/**
 * Who an application is, read from any spec, valid or not (a resource with a typo elsewhere must
 * still be deletable, in its lattice, by its policy): computed once per derivation, by identityOf().
 */
export interface Identity {
  ref: ResourceRef;
  /** `<namespace>/<name>`: written into every manifest we put, checked before every write. */
  owner: string;
  lattice: string;
  deletionPolicy: 'Delete' | 'Orphan';
}

/** What a valid spec settles besides the manifest. */
export interface Settings {
  pinnedVersion: string | undefined;
  suspend: boolean;
  revisionHistoryLimit: number;
  adopt: boolean;
}

/** A valid application before rendering: its identity, settings and what the manifest is made of. */
export interface ValidSpec extends Identity, Settings {
  spec: ApplicationSpec;
  /** Labels and annotations that pass through to the manifest. */
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export type Validation = { ok: true; app: ValidSpec } | { ok: false; identity: Identity; problems: string[] };

const checkSpec = compile<ApplicationSpec>(ApplicationSpecSchema);
/** wadm parses manifests with serde_json, whose recursion limit is 128; real specs nest about 10 deep. */
const MAX_SPEC_DEPTH = 64;

function refOf(parent: Parent): ResourceRef {
  const { namespace, name, generation } = parent.metadata;
  return { namespace, name, generation: generation ?? 0 };
}

/**
 * The lattice a parent targets, even when the rest of its spec is invalid (finalize needs it).
 * Without `spec.lattice`, the lattice its status says it is in: DEFAULT_LATTICE chooses where a
 * new application goes, and a change to it (a rollout, where old and new replicas answer in
 * turn) must never move, undeploy or delete what already runs. Only its own spec moves it.
 */
export function latticeOf(parent: Parent, defaultLattice: string): string {
  const spec = parent.spec as { lattice?: unknown } | undefined;
  if (typeof spec?.lattice === 'string') return spec.lattice;
  const current = (parent.status as { lattice?: unknown } | null | undefined)?.lattice;
  return typeof current === 'string' && isWadmName(current) ? current : defaultLattice;
}

/** The one rule for who an application is; `spec.deletionPolicy` is read even from an invalid spec. */
function identityOf(parent: Parent, defaultLattice: string): Identity {
  const ref = refOf(parent);
  const deletionPolicy = (parent.spec as { deletionPolicy?: unknown } | undefined)?.deletionPolicy === 'Orphan' ? 'Orphan' : 'Delete';
  return { ref, owner: `${ref.namespace}/${ref.name}`, lattice: latticeOf(parent, defaultLattice), deletionPolicy };
}

export function validateParent(parent: Parent, defaultLattice: string): Validation {
  const identity = identityOf(parent, defaultLattice);
  const { ref, owner, lattice, deletionPolicy } = identity;
  const problems: string[] = [];
  if (!isWadmName(ref.name)) {
    problems.push(`metadata.name: "${ref.name}" cannot be a wadm application name: use at most 253 letters, digits, "-" and "_" (no dots)`);
  }
  const labels = stringMap(parent.metadata.labels, 'metadata.labels', problems);
  const annotations = stringMap(parent.metadata.annotations, 'metadata.annotations', problems);
  if (parent.spec === undefined || parent.spec === null) {
    problems.push('spec: is required');
  } else if (deeperThan(parent.spec, MAX_SPEC_DEPTH)) {
    problems.push(`spec: is nested deeper than ${MAX_SPEC_DEPTH} levels`);
  } else if (!checkSpec(parent.spec)) {
    problems.push(...checkSpec.problems(parent.spec, 'spec'));
  } else {
    problems.push(...checkComponents(parent.spec));
  }
  const pinnedVersion = pinOf(parent.spec as ApplicationSpec | undefined, annotations, problems);
  const passedLabels = passThrough(labels, 'metadata.labels', problems);
  const passedAnnotations = passThrough(annotations, 'metadata.annotations', problems);
  if (problems.length > 0) return { ok: false, identity, problems };

  const spec = parent.spec as ApplicationSpec;
  return {
    ok: true,
    app: {
      ref,
      owner,
      lattice,
      spec,
      pinnedVersion,
      deletionPolicy,
      suspend: spec.suspend ?? false,
      revisionHistoryLimit: spec.revisionHistoryLimit ?? DEFAULT_REVISION_HISTORY_LIMIT,
      adopt: annotations[ADOPT_ANNOTATION] === 'true',
      labels: passedLabels,
      annotations: passedAnnotations,
    },
  };
}

/** spec.version, or wadm's own `version` annotation kept from a converted manifest. */
function pinOf(spec: ApplicationSpec | undefined, annotations: Record<string, string>, problems: string[]): string | undefined {
  const fromSpec = typeof spec?.version === 'string' ? spec.version : undefined;
  const fromAnnotation = annotations[VERSION_ANNOTATION];
  if (fromSpec !== undefined && fromAnnotation !== undefined && fromSpec !== fromAnnotation) {
    problems.push(
      `spec.version: "${fromSpec}" differs from annotation metadata.annotations.version "${fromAnnotation}": remove one of them`,
    );
  }
  const pin = fromSpec ?? fromAnnotation;
  if (pin === 'latest') {
    problems.push(`${fromSpec !== undefined ? 'spec.version' : 'metadata.annotations.version'}: "latest" is not allowed in wadm`);
  }
  return pin;
}

function stringMap(value: unknown, field: string, problems: string[]): Record<string, string> {
  if (value === undefined || value === null) return {};
  const entries = Object.entries(value as Record<string, unknown>);
  const bad = entries.find(([, v]) => typeof v !== 'string');
  if (bad) problems.push(`${field}[${JSON.stringify(bad[0])}]: must be a string`);
  return Object.fromEntries(entries.filter(([, v]) => typeof v === 'string')) as Record<string, string>;
}

function passThrough(map: Record<string, string>, field: string, problems: string[]): Record<string, string> {
  const kept = Object.entries(map).filter(([key]) => isPassedThrough(key) && key !== VERSION_ANNOTATION);
  for (const [key] of kept) {
    if (!isValidOamKey(key)) problems.push(`${field}[${JSON.stringify(key)}]: is not a key wadm accepts`);
  }
  return Object.fromEntries(kept);
}

/**
 * Iterative, so that the check itself cannot overflow the stack. Objects only are stacked, each
 * beside its depth in a second stack: no pair per value (this runs on every new spec).
 */
function deeperThan(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  const nodes: object[] = [value];
  const depths: number[] = [0];
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    const depth = depths.pop()!;
    if (depth >= limit) return true;
    const children: unknown[] = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) {
      if (child !== null && typeof child === 'object') {
        nodes.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}
