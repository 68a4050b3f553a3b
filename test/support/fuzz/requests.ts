// Hook requests to fuzz with: the hello fixture with hostile or mostly valid identities, specs, annotations
// and previous statuses; envelopes written as JSON text with every part possibly hostile; values nested
// thousands deep and multi-megabyte strings at any place, described small and built inside the property.
import fc from 'fast-check';
import { ADOPT_ANNOTATION } from '../../../src/core/names.js';
import type { HookRequest } from '../../../src/schema/hook.js';
import { PHASES, SCALER_STATES } from '../../../src/schema/status.js';
import { wasmApp, hookRequest, type Resource } from '../resources.js';
import {
  clone,
  hostileKey,
  hostileString,
  jsonish,
  mutate,
  mutation,
  mutations,
  NAMES,
  NAMESPACES,
  nonEmptyHostile,
  objectText,
  rawJson,
  token,
  withMembers,
  type Mutation,
} from './values.js';

// The hello fixture, read once.
export const HELLO: Resource = wasmApp().build();

export const timeText = fc.oneof(
  fc.constantFrom(
    '2026-11-30T11:00:00Z',
    '2026-11-30T12:00:00Z',
    '2026-02-30T00:00:00Z',
    '2026-11-30T24:00:00Z',
    '2026-11-30T12:00:00.123Z',
    '9999-12-31T23:59:59Z',
    '0000-01-01T00:00:00Z',
    'yesterday',
    '',
  ),
  fc
    .date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
    .map((d) => d.toISOString().replace(/\.\d{3}Z$/, 'Z')),
  jsonish,
);
export const conditionLike = fc.record(
  {
    type: fc.oneof({ weight: 4, arbitrary: fc.constantFrom('Ready', 'Reconciling', 'Stalled') }, { weight: 1, arbitrary: jsonish }),
    status: fc.oneof({ weight: 4, arbitrary: fc.constantFrom('True', 'False', 'Unknown') }, { weight: 1, arbitrary: jsonish }),
    reason: jsonish,
    message: jsonish,
    lastTransitionTime: timeText,
    observedGeneration: jsonish,
  },
  { requiredKeys: [] },
);
export const scalerLike = fc.record(
  {
    kind: fc.oneof(fc.constantFrom('SpreadScaler', 'LinkScaler'), jsonish),
    name: fc.oneof(hostileString, jsonish),
    status: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...SCALER_STATES) }, { weight: 1, arbitrary: jsonish }),
    message: fc.oneof(hostileString, jsonish),
  },
  { requiredKeys: [] },
);
/** A stale or garbage previous status, as a parent may carry after edits, downgrades or tampering. */
export const previousStatus: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: jsonish },
  {
    weight: 4,
    arbitrary: fc.record(
      {
        observedGeneration: fc.oneof(fc.nat(5), jsonish),
        lattice: fc.oneof(fc.constant('default'), hostileString),
        version: fc.oneof(token, jsonish),
        deployedVersion: fc.oneof(token, hostileString, jsonish),
        phase: fc.oneof(fc.constantFrom(...PHASES), jsonish),
        message: jsonish,
        scalers: fc.oneof({ weight: 3, arbitrary: fc.array(scalerLike, { maxLength: 4 }) }, { weight: 1, arbitrary: jsonish }),
        conditions: fc.oneof({ weight: 4, arbitrary: fc.array(conditionLike, { maxLength: 5 }) }, { weight: 1, arbitrary: jsonish }),
      },
      { requiredKeys: [] },
    ),
  },
);

export interface ResourceCase {
  name: string;
  namespace: string;
  generation: number;
  adopt: string | undefined;
  annotations: [string, string][];
  labels: [string, string][];
  overrides: Record<string, unknown>;
  mutations: Mutation[];
  status: unknown;
}
export const resourceCase: fc.Arbitrary<ResourceCase> = fc.record({
  name: fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...NAMES) }, { weight: 2, arbitrary: nonEmptyHostile }),
  namespace: fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...NAMESPACES) }, { weight: 2, arbitrary: nonEmptyHostile }),
  generation: fc.nat(1000),
  adopt: fc.constantFrom(undefined, undefined, 'true', 'false', 'True', ''),
  annotations: fc.oneof(
    { weight: 4, arbitrary: fc.constant<[string, string][]>([]) },
    { weight: 1, arbitrary: fc.array(fc.tuple(hostileKey, hostileString), { maxLength: 3 }) },
  ),
  labels: fc.oneof(
    { weight: 4, arbitrary: fc.constant<[string, string][]>([]) },
    { weight: 1, arbitrary: fc.array(fc.tuple(hostileKey, hostileString), { maxLength: 3 }) },
  ),
  overrides: fc.record(
    {
      lattice: fc.oneof({ weight: 3, arbitrary: fc.constantFrom('default', 'other', 'team-a') }, { weight: 2, arbitrary: hostileString }),
      version: fc.oneof(token, hostileString, fc.constantFrom('v1', 'v2', 'constructor', '__proto__')),
      suspend: fc.oneof(fc.boolean(), jsonish),
      deletionPolicy: fc.oneof(fc.constantFrom('Delete', 'Orphan'), jsonish),
      revisionHistoryLimit: fc.oneof(fc.integer({ min: 1, max: 4 }), fc.integer({ min: -2, max: 60 }), jsonish),
      description: hostileString,
    },
    { requiredKeys: [] },
  ),
  mutations,
  status: previousStatus,
});

/** Mostly valid resources, so that the lattice is really written to (and ownership really tested). */
export const plausibleResource: fc.Arbitrary<ResourceCase> = fc.record({
  name: fc.constantFrom(...NAMES),
  namespace: fc.constantFrom(...NAMESPACES),
  generation: fc.nat(5),
  adopt: fc.constantFrom(undefined, undefined, 'true', 'false'),
  annotations: fc.constant<[string, string][]>([]),
  labels: fc.oneof(
    { weight: 4, arbitrary: fc.constant<[string, string][]>([]) },
    { weight: 1, arbitrary: fc.constant<[string, string][]>([['team', 'blue']]) },
  ),
  overrides: fc.record(
    {
      lattice: fc.constantFrom('default', 'default', 'other'),
      version: fc.constantFrom('v1', 'v2', 'v3'),
      suspend: fc.boolean(),
      deletionPolicy: fc.constantFrom('Delete', 'Orphan'),
      revisionHistoryLimit: fc.integer({ min: 1, max: 4 }),
      description: fc.constantFrom('a', 'b', 'c', 'd'),
    },
    { requiredKeys: [] },
  ),
  mutations: fc.oneof(
    { weight: 5, arbitrary: fc.constant<Mutation[]>([]) },
    { weight: 1, arbitrary: fc.array(mutation, { maxLength: 1 }) },
  ),
  status: previousStatus,
});
/** A valid resource but for a hostile name, namespace or lattice: what invariant 2 is about. */
export const hostileIdentity: fc.Arbitrary<ResourceCase> = fc
  .record({
    base: plausibleResource,
    name: fc.option(nonEmptyHostile, { nil: undefined }),
    namespace: fc.option(nonEmptyHostile, { nil: undefined }),
    lattice: fc.option(hostileString, { nil: undefined }),
  })
  .map(({ base, name, namespace, lattice }) => ({
    ...base,
    name: name ?? base.name,
    namespace: namespace ?? base.namespace,
    overrides: lattice === undefined ? base.overrides : { ...base.overrides, lattice },
  }));
/** Valid-leaning and hostile resources mixed. */
export const anyResource = fc.oneof(
  { weight: 3, arbitrary: plausibleResource },
  { weight: 2, arbitrary: hostileIdentity },
  { weight: 2, arbitrary: resourceCase },
);
/** For properties about what happens in wadm: most cases must get that far. */
export const mostlyValid = fc.oneof({ weight: 4, arbitrary: plausibleResource }, { weight: 1, arbitrary: anyResource });

/** The hook request of a case, as the server would see it after JSON.parse. */
export function requestOf(c: ResourceCase, finalizing = false): HookRequest {
  const base = clone(HELLO);
  let spec: unknown = { ...base.spec, ...c.overrides };
  for (const m of c.mutations) spec = mutate(spec, m);
  const annotations: Record<string, string> = { ...base.metadata.annotations, ...Object.fromEntries(c.annotations) };
  if (c.adopt !== undefined) annotations[ADOPT_ANNOTATION] = c.adopt;
  const metadata: Resource['metadata'] = { name: c.name, namespace: c.namespace, annotations };
  if (c.labels.length > 0) metadata.labels = Object.fromEntries(c.labels);
  const resource = { ...base, metadata, spec } as Resource;
  return JSON.parse(JSON.stringify(hookRequest(resource, { generation: c.generation, status: c.status, finalizing }))) as HookRequest;
}

/** Hook envelopes as JSON text, every part possibly hostile, with extra keys at every level. */
export interface EnvelopeCase {
  name: string | undefined;
  namespace: string | undefined;
  generation: string | undefined;
  annotations: string | undefined;
  labels: string | undefined;
  spec: string | undefined;
  status: string | undefined;
  finalizing: string | undefined;
  controller: string | undefined;
  children: string | undefined;
  extras: { level: 'envelope' | 'parent' | 'metadata' | 'spec' | 'annotations'; key: string; value: string }[];
}
export const maybe = <T>(arbitrary: fc.Arbitrary<T>, weight = 4): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: 1, arbitrary: fc.constant(undefined) }, { weight, arbitrary });
export const stringMapText = fc
  .array(
    fc.tuple(
      hostileKey,
      hostileString.map((s) => JSON.stringify(s)),
    ),
    { maxLength: 4 },
  )
  .map(objectText);
export const specText = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .record({ overrides: fc.oneof(plausibleResource, resourceCase).map((c) => c.overrides), mutations })
      .map((s) => JSON.stringify(s.mutations.reduce<unknown>((spec, m) => mutate(spec, m), { ...clone(HELLO.spec), ...s.overrides }))),
  },
  { weight: 1, arbitrary: rawJson },
);
export const envelopeCase: fc.Arbitrary<EnvelopeCase> = fc.record({
  name: maybe(
    fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...NAMES).map((s) => JSON.stringify(s)) },
      { weight: 3, arbitrary: hostileString.map((s) => JSON.stringify(s)) },
      { weight: 1, arbitrary: rawJson },
    ),
    10,
  ),
  namespace: maybe(
    fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...NAMESPACES).map((s) => JSON.stringify(s)) },
      { weight: 3, arbitrary: hostileString.map((s) => JSON.stringify(s)) },
      { weight: 1, arbitrary: rawJson },
    ),
    10,
  ),
  generation: maybe(
    fc.oneof(
      { weight: 6, arbitrary: fc.nat().map(String) },
      { weight: 1, arbitrary: fc.constantFrom('-1', '1.5', '1e300', '"1"', 'null', '1e400') },
    ),
    2,
  ),
  annotations: maybe(fc.oneof({ weight: 8, arbitrary: stringMapText }, { weight: 1, arbitrary: rawJson })),
  labels: maybe(fc.oneof({ weight: 8, arbitrary: stringMapText }, { weight: 1, arbitrary: rawJson }), 1),
  spec: maybe(specText, 8),
  status: maybe(
    fc.oneof(
      previousStatus.map((s) => JSON.stringify(s) ?? 'null'),
      rawJson,
    ),
  ),
  finalizing: maybe(fc.oneof({ weight: 8, arbitrary: fc.boolean().map(String) }, { weight: 1, arbitrary: rawJson }), 2),
  controller: maybe(
    fc.oneof({ weight: 4, arbitrary: fc.constant('{"kind":"CompositeController"}') }, { weight: 1, arbitrary: rawJson }),
    1,
  ),
  children: maybe(rawJson, 1),
  extras: fc.array(
    fc.record({ level: fc.constantFrom('envelope', 'parent', 'metadata', 'spec', 'annotations'), key: hostileKey, value: rawJson }),
    { maxLength: 3 },
  ),
});

export function envelopeText(e: EnvelopeCase): string {
  const extras = (level: EnvelopeCase['extras'][number]['level']): [string, string][] =>
    e.extras.filter((x) => x.level === level).map((x) => [x.key, x.value]);
  const members = (entries: [string, string | undefined][]): [string, string][] =>
    entries.filter((m): m is [string, string] => m[1] !== undefined);
  const metadata = objectText(
    members([
      ['name', e.name],
      ['namespace', e.namespace],
      ['generation', e.generation],
      ['annotations', e.annotations === undefined ? undefined : withMembers(e.annotations, extras('annotations'))],
      ['labels', e.labels],
    ]),
  );
  const parent = objectText(
    members([
      ['apiVersion', '"core.wasmcloud.com/v1beta1"'],
      ['kind', '"WasmCloudApplication"'],
      ['metadata', withMembers(metadata, extras('metadata'))],
      ['spec', e.spec === undefined ? undefined : withMembers(e.spec, extras('spec'))],
      ['status', e.status],
    ]),
  );
  return withMembers(
    objectText(
      members([
        ['controller', e.controller],
        ['parent', withMembers(parent, extras('parent'))],
        ['children', e.children],
        ['finalizing', e.finalizing],
      ]),
    ),
    extras('envelope'),
  );
}

export const DEEP_PLACES = [
  'custom-trait-properties',
  'link-target',
  'spec-unknown-field',
  'config-value',
  'annotation-value',
  'label-value',
  'metadata-unknown-field',
  'status',
  'status-phase',
  'status-conditions',
  'children',
  'controller-field',
] as const;
export interface DeepCase {
  depth: number;
  shape: 'array' | 'object' | 'proto-object' | 'mixed';
  place: (typeof DEEP_PLACES)[number];
  hook: 'sync' | 'finalize';
}
export const deepCase: fc.Arbitrary<DeepCase> = fc.record({
  depth: fc.integer({ min: 500, max: 20_000 }),
  shape: fc.constantFrom('array', 'object', 'proto-object', 'mixed'),
  place: fc.constantFrom(...DEEP_PLACES),
  hook: fc.constantFrom('sync', 'finalize'),
});

export function nested(depth: number, shape: DeepCase['shape']): string {
  switch (shape) {
    case 'array':
      return '['.repeat(depth) + ']'.repeat(depth);
    case 'object':
      return '{"a":'.repeat(depth) + '0' + '}'.repeat(depth);
    case 'proto-object':
      return '{"__proto__":'.repeat(depth) + '{"constructor":{"prototype":1}}' + '}'.repeat(depth);
    case 'mixed':
      return '[{"constructor":'.repeat(depth) + 'null' + '}]'.repeat(depth);
  }
}

export const MARK = '@@FUZZ@@';
export const MARK_TEXT = JSON.stringify(MARK);

/** The hello request with a marker at one place; the marker is replaced in its JSON text. */
export function helloWithMark(place: string, finalizing: boolean): Record<string, unknown> {
  const request = clone(hookRequest(HELLO, { finalizing })) as unknown as Record<string, unknown> & {
    parent: Record<string, unknown> & { metadata: Record<string, unknown> };
  };
  const spec = request.parent['spec'] as {
    components: { properties: Record<string, unknown>; traits: { type: string; properties: Record<string, unknown> }[] }[];
    [key: string]: unknown;
  };
  const metadata = request.parent.metadata;
  switch (place) {
    case 'custom-trait-properties':
      spec.components[0]!.traits.push({ type: 'custom', properties: { x: MARK } });
      break;
    case 'link-target':
      spec.components[1]!.traits[0]!.properties['target'] = MARK;
      break;
    case 'spec-unknown-field':
      spec['extra'] = MARK;
      break;
    case 'config-value':
      spec.components[0]!.properties['config'] = [{ name: 'cfg', properties: { key: MARK } }];
      break;
    case 'annotation-value':
      metadata['annotations'] = { ...(metadata['annotations'] as object), key: MARK };
      break;
    case 'label-value':
      metadata['labels'] = { key: MARK };
      break;
    case 'metadata-unknown-field':
      metadata['managedFields'] = [{ manager: 'kubectl', fieldsV1: MARK }];
      break;
    case 'status':
      request.parent['status'] = MARK;
      break;
    case 'status-phase':
      request.parent['status'] = { phase: MARK, deployedVersion: MARK };
      break;
    case 'status-conditions':
      request.parent['status'] = {
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-11-30T11:00:00Z', message: MARK }, MARK],
        scalers: MARK,
      };
      break;
    case 'children':
      request['children'] = { 'ConfigMap.v1': MARK };
      break;
    case 'controller-field':
      request['controller'] = { metadata: MARK };
      break;
    default:
      throw new Error(`unknown place ${place}`);
  }
  return request;
}

export function deepText(c: DeepCase): string {
  return JSON.stringify(helloWithMark(c.place, c.hook === 'finalize'))
    .split(MARK_TEXT)
    .join(nested(c.depth, c.shape));
}

export const HUGE_PLACES = [
  'name',
  'namespace',
  'lattice',
  'version',
  'description',
  'image',
  'component-name',
  'config-key',
  'config-value',
  'annotation-key',
  'annotation-value',
  'label-value',
  'status-phase',
  'condition-time',
  'condition-message',
  'managed-fields',
] as const;
export interface HugeCase {
  size: number;
  char: string;
  place: (typeof HUGE_PLACES)[number];
  hook: 'sync' | 'finalize';
}
export const hugeCase: fc.Arbitrary<HugeCase> = fc.record({
  size: fc.integer({ min: 64 * 1024, max: 3 * 1024 * 1024 }),
  char: fc.constantFrom('x', '*', '.', 'é', '😀', '\u0000', '\ud800', '"', '\\'),
  place: fc.constantFrom(...HUGE_PLACES),
  hook: fc.constantFrom('sync', 'finalize'),
});

export function hugeRequest(c: HugeCase): HookRequest {
  const big = c.char.repeat(Math.ceil(c.size / c.char.length));
  const request = clone(hookRequest(HELLO, { finalizing: c.hook === 'finalize' })) as unknown as {
    parent: {
      metadata: Record<string, unknown>;
      spec: Record<string, unknown> & { components: { name: string; properties: Record<string, unknown> }[] };
      status?: unknown;
    };
  };
  const { metadata, spec } = request.parent;
  switch (c.place) {
    case 'name':
      metadata['name'] = big;
      break;
    case 'namespace':
      metadata['namespace'] = big;
      break;
    case 'lattice':
      spec['lattice'] = big;
      break;
    case 'version':
      spec['version'] = big;
      break;
    case 'description':
      spec['description'] = big;
      break;
    case 'image':
      spec.components[0]!.properties['image'] = big;
      break;
    case 'component-name':
      spec.components[0]!.name = big;
      break;
    case 'config-key':
      spec.components[0]!.properties['config'] = [{ name: 'cfg', properties: { [big]: 'v' } }];
      break;
    case 'config-value':
      spec.components[0]!.properties['config'] = [{ name: 'cfg', properties: { key: big } }];
      break;
    case 'annotation-key':
      metadata['annotations'] = { [`example.com/${big}`]: 'v', [big]: 'w' };
      break;
    case 'annotation-value':
      metadata['annotations'] = { 'example.com/big': big };
      break;
    case 'label-value':
      metadata['labels'] = { big };
      break;
    case 'status-phase':
      request.parent.status = { phase: big, deployedVersion: big, scalers: [{ kind: big, name: big, status: 'Deployed', message: big }] };
      break;
    case 'condition-time':
      request.parent.status = { conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: big }] };
      break;
    case 'condition-message':
      request.parent.status = {
        conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: '2026-11-30T11:00:00Z', message: big, reason: big }],
      };
      break;
    case 'managed-fields':
      metadata['managedFields'] = [{ manager: 'kubectl', fieldsV1: big }];
      break;
  }
  return request as unknown as HookRequest;
}
