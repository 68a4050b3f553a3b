// Shared by the fuzz files (test/fuzz/*.test.ts): the fixed-seed property runner, the generators of hostile
// input, the lattices that check what reaches them, and the HTTP harness. Not a test file itself.
//
// Property-based fuzzing of the hook body with fast-check: hostile and malformed input through the
// pure core (prepare + decideSync/decideFinalize, run by createHooks against a MemoryLattice) and
// through the HTTP layer (buildServer + app.inject with raw payload strings).
//
// Every property runs with the same fixed seed (each property starts from it, whatever ran before)
// and prints one line `[fuzz] <property>: <n> cases, seed <s>, ...`. FUZZ_SEED=<n> changes the seed,
// FUZZ_RUNS_FACTOR=<x> scales every number of runs (10 for a soak); rerunning with the printed seed
// and factor reproduces a failure. A failure prints fast-check's report: seed, path, the shrunk
// counterexample and the error. Counterexamples of big inputs are descriptions (a depth, a size),
// never the megabytes themselves, so that reports stay readable.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import fc from 'fast-check';
import type { Action, ActionResult } from '../../src/core/facts.js';
import type { HookName, Hooks, Lattice } from '../../src/http/hooks.js';
import { apiSubject, eventSubject, statusSubject, type ModelOperation } from '../../src/lattice/subjects.js';
import { WADM_STATUS_TYPES, type WadmStatus } from '../../src/lattice/wire.js';
import type { UnavailableReason } from '../../src/core/facts.js';
import { createLogger } from '../../src/plumbing/logger.js';
import { ADOPT_ANNOTATION, OWNER_ANNOTATION } from '../../src/core/names.js';
import { HookRequestSchema, type HookRequest, type HookResponse } from '../../src/schema/hook.js';
import { ApplicationStatusSchema, PHASES, SCALER_STATES } from '../../src/schema/status.js';
import { compile } from '../../src/schema/validator.js';
import { applicationOf } from '../../src/core/application.js';
import { defaultOnly, fromPolicy, type Tenancy } from '../../src/core/tenancy.js';
import { MemoryLattice } from '../support/memory-lattice.js';
import { wasmApp, hookRequest, type Resource } from '../support/resources.js';
import { TEST_EPOCH } from '../support/clock.js';
import type { LogLine } from '../support/logs.js';
import { build, testHooks, type TestHooksOptions } from '../support/http.js';
import type { Cleanups } from '../support/service.js';

export const SEED = Number(process.env['FUZZ_SEED'] ?? 20261130);
export const FACTOR = Number(process.env['FUZZ_RUNS_FACTOR'] ?? 1);
export const runs = (n: number): number => Math.max(1, Math.round(n * FACTOR));
export const NOW = TEST_EPOCH;
export const BODY_LIMIT = 16 * 1024 * 1024;
/** Smaller than production, so multi-megabyte cases cross it: above it, 413 is the right answer. */
export const SMALL_BODY_LIMIT = 2 * 1024 * 1024;
export const TOKEN = /^[-\w]+$/;
export const SILENT = createLogger('silent');

// ---------------------------------------------------------------------------------------------
// Running properties and counting cases
// ---------------------------------------------------------------------------------------------

export const totals: { title: string; cases: number; failed: boolean }[] = [];

export async function property<T>(title: string, arbitrary: fc.Arbitrary<T>, numRuns: number, predicate: (value: T) => Promise<void>): Promise<void> {
  const started = performance.now();
  const details = await fc.check(fc.asyncProperty(arbitrary, predicate), { seed: SEED, numRuns, includeErrorInReport: true });
  const ms = Math.round(performance.now() - started);
  const outcome = details.failed ? `FAILED at case ${details.numRuns} (shrunk ${details.numShrinks} times)` : 'passed';
  console.log(`[fuzz] ${title}: ${details.numRuns} cases, seed ${details.seed}, ${ms} ms, ${outcome}`);
  totals.push({ title, cases: details.numRuns, failed: details.failed });
  if (details.failed) throw new Error(fc.defaultReportMessage(details));
}

/** Counts outcomes, to show what the cases covered (a property over inputs that never reach wadm proves little). */
export class Tally {
  private readonly counts = new Map<string, number>();
  add(key: string): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }
  print(title: string): void {
    const entries = [...this.counts.entries()].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`);
    console.log(`[fuzz] ${title}: ${entries.join(', ')}`);
  }
}

export const outcome = (response: HookResponse): string => response.status.conditions?.[0]?.reason ?? 'none';

// Unhandled rejections and uncaught exceptions anywhere in this file fail the last test.
export const escaped: string[] = [];
process.on('unhandledRejection', (reason) => escaped.push(`unhandledRejection: ${String((reason as Error)?.stack ?? reason)}`));
process.on('uncaughtExceptionMonitor', (err) => escaped.push(`uncaughtException: ${err.stack ?? String(err)}`));

// Keys on Object.prototype before any fuzzing: no input may add to them.
export const PROTOTYPE_KEYS = JSON.stringify(Object.getOwnPropertyNames(Object.prototype).sort());
export function assertNoPrototypePollution(): void {
  assert.equal(JSON.stringify(Object.getOwnPropertyNames(Object.prototype).sort()), PROTOTYPE_KEYS, 'Object.prototype was modified');
  assert.equal(Object.getPrototypeOf({}), Object.prototype);
}

// ---------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------

export const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));
export const token = fc.stringMatching(/^[-\w]{1,16}$/);
export const HOSTILE = [
  '*', '>', '*.>', 'a.b', 'a b', ' ', '', '.', '..', 'a*', 'a>', 'a.*', '>.a', 'wadm.api.default.model.put', '\t', '\n', 'a\nb', 'a\r\n',
  '\u0000', 'a\u0000b', '\u202eevil\u202c', 'שלום', 'مرحبا', '😀', '👩‍👩‍👧', 'e\u0301', '\ufeff', '\uffff', '\u2028',
  '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__',
  'latest', 'true', 'True', 'default', 'hello-world', 'app', '-', '_', 'a/b', '../..', 'kubernetes.io/x', 'x.k8s.io/y',
  OWNER_ANNOTATION, ADOPT_ANNOTATION, 'version', 'description', '{namespace}', '%2A', '\\', '"', "'", '${x}', 'x'.repeat(129),
];
export const hostileString = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...HOSTILE) },
  { weight: 2, arbitrary: token },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) },
  { weight: 1, arbitrary: fc.tuple(token, loneSurrogate, token).map(([a, s, b]) => a + s + b) },
  { weight: 2, arbitrary: fc.tuple(token, fc.constantFrom('*', '>', '.', ' ', '\u0000', '/', '\n'), token).map(([a, s, b]) => a + s + b) },
);
export const nonEmptyHostile = hostileString.filter((s) => s.length > 0);
export const hostileKey = fc.oneof({ weight: 2, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype') }, { weight: 3, arbitrary: hostileString });

/** Any JSON value, including hostile strings and numbers at the edges. */
export const jsonish: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 3, arbitrary: hostileString },
  { weight: 2, arbitrary: fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, 1e300, 2 ** 53 + 2, -(2 ** 31), [], {}, [null], { '': '' }) },
  {
    weight: 1,
    arbitrary: fc
      .anything({ maxDepth: 2, withDate: true, withMap: true, withSet: true, withNullPrototype: true, withSparseArray: true, withBoxedValues: true })
      .map((value) => {
        const text = JSON.stringify(value);
        return text === undefined ? null : (JSON.parse(text) as unknown);
      }),
  },
);

export const JSON_LEAVES = ['null', 'true', 'false', '0', '-0', '1e400', '-1e400', '1e-400', '123456789012345678901234567890', '1E21', '0.1', '-1'];
/** JSON text, written out by hand so that `__proto__`, `constructor` and duplicate keys really appear in it. */
export const { rawJson } = fc.letrec<{ rawJson: string; rawLeaf: string; rawArray: string; rawObject: string }>((tie) => ({
  rawJson: fc.oneof({ depthSize: 'small' }, tie('rawLeaf'), tie('rawArray'), tie('rawObject')),
  rawLeaf: fc.oneof(fc.constantFrom(...JSON_LEAVES), hostileString.map((s) => JSON.stringify(s)), fc.double().map((d) => JSON.stringify(d))),
  rawArray: fc.array(tie('rawJson'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
  rawObject: fc.array(fc.tuple(hostileKey, tie('rawJson')), { maxLength: 4 }).map((members) => objectText(members)),
}));

export function objectText(members: [string, string][]): string {
  return `{${members.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(',')}}`;
}

/** Adds raw members to the front of an object's JSON text (other texts are returned as they are). */
export function withMembers(text: string, members: [string, string][]): string {
  if (members.length === 0 || !text.startsWith('{')) return text;
  const rest = text.slice(1).trimStart();
  return `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}${rest.startsWith('}') ? '' : ','}${rest}`;
}

export const NAMES = ['hello-world', 'app', 'a-b', 'x_y'];
export const NAMESPACES = ['default', 'team-a', 'team-b', 'kube-system'];
export const OWNERS: (string | null)[] = [...NAMESPACES.flatMap((ns) => NAMES.map((n) => `${ns}/${n}`)), null, '', 'someone/else', '*/*'];

export const TENANCIES: Record<string, Tenancy> = {
  'default-only': defaultOnly('default'),
  'any-lattice': fromPolicy({ rules: [{ namespaces: ['*'], lattices: ['*'] }] }, 'default'),
  'own-namespace': fromPolicy({ rules: [{ namespaces: ['team-*', '*'], lattices: ['{namespace}', 'default', 'other'] }] }, 'default'),
};
export const tenancyName = fc.constantFrom(...Object.keys(TENANCIES));
export const tenancyOf = (name: string): Tenancy => TENANCIES[name]!;

// The hello fixture, read once.
export const HELLO: Resource = wasmApp().build();
export const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

export interface Mutation {
  op: 'replace' | 'delete' | 'insert';
  at: number;
  key: string;
  value: unknown;
}
export const mutation: fc.Arbitrary<Mutation> = fc.record({
  op: fc.constantFrom('replace', 'delete', 'insert'),
  at: fc.nat(),
  key: hostileKey,
  value: jsonish,
});
export const mutations = fc.oneof({ weight: 3, arbitrary: fc.constant<Mutation[]>([]) }, { weight: 4, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }) });

export type Path = (string | number)[];
export function pathsOf(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  out.push(prefix);
  if (Array.isArray(value)) value.forEach((item, i) => pathsOf(item, [...prefix, i], out));
  else if (value !== null && typeof value === 'object') for (const key of Object.keys(value)) pathsOf((value as Record<string, unknown>)[key], [...prefix, key], out);
  return out;
}

/** Own data property, even for `__proto__` (as JSON.parse would make it). */
export function define(target: object, key: string | number, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Replaces, deletes or adds at a path of a JSON value; returns the new value (the input is copied). */
export function mutate(root: unknown, m: Mutation): unknown {
  const copy = clone(root);
  const paths = pathsOf(copy);
  const path = paths[m.at % paths.length]!;
  if (path.length === 0) return m.op === 'replace' ? clone(m.value) : copy;
  const parent = path.slice(0, -1).reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], copy) as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  const target = parent[last];
  switch (m.op) {
    case 'replace':
      define(parent, last, clone(m.value));
      break;
    case 'delete':
      if (Array.isArray(parent)) parent.splice(Number(last), 1);
      else delete parent[last];
      break;
    case 'insert':
      if (Array.isArray(target)) target.push(clone(m.value));
      else if (target !== null && typeof target === 'object') define(target, m.key, clone(m.value));
      else define(parent, last, clone(m.value));
      break;
  }
  return copy;
}

export const timeText = fc.oneof(
  fc.constantFrom('2026-11-30T11:00:00Z', '2026-11-30T12:00:00Z', '2026-02-30T00:00:00Z', '2026-11-30T24:00:00Z', '2026-11-30T12:00:00.123Z', '9999-12-31T23:59:59Z', '0000-01-01T00:00:00Z', 'yesterday', ''),
  fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString().replace(/\.\d{3}Z$/, 'Z')),
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

export const statusInfo = fc.record({ type: fc.constantFrom(...WADM_STATUS_TYPES), message: hostileString }, { requiredKeys: ['type'] });
export const wadmStatus: fc.Arbitrary<WadmStatus> = fc.record(
  {
    status: statusInfo,
    scalers: fc.array(fc.record({ id: hostileString, kind: fc.oneof(fc.constantFrom('SpreadScaler', 'LinkScaler'), hostileString), name: hostileString, status: statusInfo }, { requiredKeys: ['status'] }), { maxLength: 4 }),
  },
  { requiredKeys: ['status'] },
);

export interface SeedModel {
  name: string;
  versions: { version: string; owner: string | null; contentHash: string | null }[];
  deployed: number | null;
  status: WadmStatus | null;
  predatesDeploy: boolean;
}
/** Models already in wadm: ours, other resources', unowned ones (created with `wash app`). */
export const seedModels: fc.Arbitrary<SeedModel[]> = fc.array(
  fc.record({
    name: fc.constantFrom(...NAMES),
    versions: fc.array(
      fc.record({
        version: fc.oneof(token, fc.constantFrom('v1', 'v2', 'constructor', '__proto__', 'sha-0000000000000000')),
        owner: fc.constantFrom(...OWNERS),
        contentHash: fc.constantFrom(null, '0'.repeat(64), 'garbage'),
      }),
      { minLength: 1, maxLength: 12 },
    ),
    deployed: fc.option(fc.nat(), { nil: null }),
    status: fc.option(wadmStatus, { nil: null }),
    predatesDeploy: fc.boolean(),
  }),
  { maxLength: 4 },
);

export function seedLattice(memory: MemoryLattice, seeds: SeedModel[]): void {
  for (const s of seeds) {
    const deployed = s.deployed === null ? null : s.versions[s.deployed % s.versions.length]!.version;
    memory.seed(s.name, s.versions.map((v) => [v.version, { owner: v.owner, contentHash: v.contentHash }]), deployed);
    if (s.status) memory.setStatus(s.name, s.status, s.predatesDeploy);
  }
}

/** How the resource's own desired version is already present in wadm (needs the rendered version). */
export type DesiredSeed = 'absent' | 'ours' | 'ours-deployed' | 'ours-other-content' | 'foreign' | 'unowned';
export const desiredSeed = fc.constantFrom<DesiredSeed>('absent', 'absent', 'ours', 'ours-deployed', 'ours-other-content', 'foreign', 'unowned');

export function seedDesired(memory: MemoryLattice, request: HookRequest, how: DesiredSeed): void {
  if (how === 'absent') return;
  const { app } = applicationOf(request.parent, 'default');
  if (!app.valid) return;
  const { name } = app.ref;
  const owner = how === 'foreign' ? 'someone/else' : how === 'unowned' ? null : app.owner;
  const contentHash = how === 'ours-other-content' ? 'f'.repeat(64) : app.manifest.contentHash;
  if (!memory.model(name)) memory.seed(name, []);
  const model = memory.model(name)!;
  model.versions.set(app.manifest.version, { owner, contentHash });
  if (how === 'ours-deployed') model.deployed = app.manifest.version;
}

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
  annotations: fc.oneof({ weight: 4, arbitrary: fc.constant<[string, string][]>([]) }, { weight: 1, arbitrary: fc.array(fc.tuple(hostileKey, hostileString), { maxLength: 3 }) }),
  labels: fc.oneof({ weight: 4, arbitrary: fc.constant<[string, string][]>([]) }, { weight: 1, arbitrary: fc.array(fc.tuple(hostileKey, hostileString), { maxLength: 3 }) }),
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
  labels: fc.oneof({ weight: 4, arbitrary: fc.constant<[string, string][]>([]) }, { weight: 1, arbitrary: fc.constant<[string, string][]>([['team', 'blue']]) }),
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
  mutations: fc.oneof({ weight: 5, arbitrary: fc.constant<Mutation[]>([]) }, { weight: 1, arbitrary: fc.array(mutation, { maxLength: 1 }) }),
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
export const anyResource = fc.oneof({ weight: 3, arbitrary: plausibleResource }, { weight: 2, arbitrary: hostileIdentity }, { weight: 2, arbitrary: resourceCase });
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
export const stringMapText = fc.array(fc.tuple(hostileKey, hostileString.map((s) => JSON.stringify(s))), { maxLength: 4 }).map(objectText);
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
  name: maybe(fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...NAMES).map((s) => JSON.stringify(s)) }, { weight: 3, arbitrary: hostileString.map((s) => JSON.stringify(s)) }, { weight: 1, arbitrary: rawJson }), 10),
  namespace: maybe(fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...NAMESPACES).map((s) => JSON.stringify(s)) }, { weight: 3, arbitrary: hostileString.map((s) => JSON.stringify(s)) }, { weight: 1, arbitrary: rawJson }), 10),
  generation: maybe(fc.oneof({ weight: 6, arbitrary: fc.nat().map(String) }, { weight: 1, arbitrary: fc.constantFrom('-1', '1.5', '1e300', '"1"', 'null', '1e400') }), 2),
  annotations: maybe(fc.oneof({ weight: 8, arbitrary: stringMapText }, { weight: 1, arbitrary: rawJson })),
  labels: maybe(fc.oneof({ weight: 8, arbitrary: stringMapText }, { weight: 1, arbitrary: rawJson }), 1),
  spec: maybe(specText, 8),
  status: maybe(fc.oneof(previousStatus.map((s) => JSON.stringify(s) ?? 'null'), rawJson)),
  finalizing: maybe(fc.oneof({ weight: 8, arbitrary: fc.boolean().map(String) }, { weight: 1, arbitrary: rawJson }), 2),
  controller: maybe(fc.oneof({ weight: 4, arbitrary: fc.constant('{"kind":"CompositeController"}') }, { weight: 1, arbitrary: rawJson }), 1),
  children: maybe(rawJson, 1),
  extras: fc.array(
    fc.record({ level: fc.constantFrom('envelope', 'parent', 'metadata', 'spec', 'annotations'), key: hostileKey, value: rawJson }),
    { maxLength: 3 },
  ),
});

export function envelopeText(e: EnvelopeCase): string {
  const extras = (level: EnvelopeCase['extras'][number]['level']): [string, string][] =>
    e.extras.filter((x) => x.level === level).map((x) => [x.key, x.value]);
  const members = (entries: [string, string | undefined][]): [string, string][] => entries.filter((m): m is [string, string] => m[1] !== undefined);
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
    objectText(members([['controller', e.controller], ['parent', withMembers(parent, extras('parent'))], ['children', e.children], ['finalizing', e.finalizing]])),
    extras('envelope'),
  );
}

// ---------------------------------------------------------------------------------------------
// Lattices that check what reaches them
// ---------------------------------------------------------------------------------------------

export const OPERATIONS: Record<Action['kind'], ModelOperation[]> = {
  'read-model': ['versions', 'get'],
  'read-version': ['get'],
  'read-status': ['status'],
  'read-key': ['versions'],
  put: ['put'],
  deploy: ['deploy'],
  undeploy: ['undeploy'],
  delete: ['del'],
};

/** A value for a message: long ones shortened, so that a 3 MB name does not become a 3 MB report. */
export function show(value: string): string {
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…(${value.length} chars)` : value);
}

/**
 * NATS closes the whole connection (every hook's requests with it) on a protocol line longer than
 * max_control_line, 4096 bytes by default: `PUB <subject> <reply inbox> <size>`.
 */
export const MAX_SUBJECT_BYTES = 4096 - 128;
export const TOO_LONG = /would make NATS close the connection/;

/** Invariant 2: one NATS token each, and subjects with exactly the tokens we expect. */
export function assertSingleTokens(lattice: string, name: string, action: Action, tenancy: Tenancy, namespace: string): void {
  if (action.kind === 'read-key') {
    // A read of the own lattice's index key, through the one model name that maps to it: sent to
    // a lattice the namespace need not be allowed, but only ever a read of its own lattice's key.
    assert.equal(`${action.key.lattice}-${action.key.name}`, lattice, 'a read-key reads the own lattice\'s index key only');
    assertSingleTokens(action.key.lattice, action.key.name, { kind: 'read-version', version: 'v' }, { ...tenancy, allows: () => true }, namespace);
    assert.ok(tenancy.allows(namespace, lattice), `namespace ${show(namespace)} read the index key of lattice ${show(lattice)}, which it may not use`);
    return;
  }
  assert.ok(TOKEN.test(lattice), `lattice ${show(lattice)} reached the Lattice`);
  assert.ok(TOKEN.test(name), `name ${show(name)} reached the Lattice`);
  assert.ok(tenancy.allows(namespace, lattice), `namespace ${show(namespace)} reached lattice ${show(lattice)}, which it may not use`);
  const subjects = OPERATIONS[action.kind].map((operation) => {
    const named = operation !== 'put';
    const subject = apiSubject('wadm.api', lattice, operation, named ? name : undefined);
    assert.deepEqual(subject.split('.'), ['wadm', 'api', lattice, 'model', operation, ...(named ? [name] : [])]);
    return subject;
  });
  subjects.push(statusSubject(lattice), eventSubject(lattice));
  assert.deepEqual(statusSubject(lattice).split('.'), ['wadm', 'status', lattice, '*']);
  assert.deepEqual(eventSubject(lattice).split('.'), ['wadm', 'evt', lattice, '>']);
  for (const subject of subjects) {
    const bytes = Buffer.byteLength(subject);
    assert.ok(bytes <= MAX_SUBJECT_BYTES, `a ${bytes}-byte subject ${show(subject)} would make NATS close the connection (max_control_line 4096)`);
  }
  if (action.kind === 'put') {
    // wadm takes the model name of a put from the body: it must be the name we checked.
    const manifest = JSON.parse(action.body) as { metadata: { name: string; annotations: Record<string, string> } };
    assert.equal(manifest.metadata.name, name);
    assert.equal(manifest.metadata.annotations[OWNER_ANNOTATION], action.owner);
  }
}

/**
 * Records every call and checks invariant 2 on it. A call that breaks it is refused (answered as
 * if wadm were unreachable) and kept in `violations`, which each property then asserts empty: so an
 * invariant-2 failure is reported as such, not as the 500 a throw would turn into.
 */
export class RecordingLattice implements Lattice {
  readonly calls: { lattice: string; name: string; action: Action }[] = [];
  readonly violations: string[] = [];
  constructor(
    readonly memory: MemoryLattice,
    readonly tenancy: Tenancy,
    readonly namespace: string,
  ) {}

  perform(lattice: string, name: string, action: Action): Promise<ActionResult> {
    this.calls.push({ lattice, name, action });
    try {
      assertSingleTokens(lattice, name, action, this.tenancy, this.namespace);
    } catch (err) {
      this.violations.push(`${action.kind}: ${(err as Error).message}`);
      return Promise.resolve({ kind: 'unavailable', reason: 'BadReply', message: 'refused by the test' });
    }
    return this.memory.perform(lattice, name, action);
  }

  /** `except`: violations another property covers (so that one finding does not hide the others). */
  assertClean(except?: RegExp): void {
    assert.deepEqual(this.violations.filter((v) => !except?.test(v)), [], 'calls that reached the Lattice');
  }
}

export const isWrite = (action: Action): boolean => !action.kind.startsWith('read-');

/** The owners of a model's versions, oldest first; undefined when there is no model. */
export function ownersOf(memory: MemoryLattice, name: string): (string | null)[] | undefined {
  const model = memory.model(name);
  if (!model || model.versions.size === 0) return undefined;
  return [...model.versions.values()].map((v) => v.owner);
}

/** Invariant 3: a write goes only to a model this resource owns by history (or adopts while every version is unowned). */
export class OwnershipGuard implements Lattice {
  owner = '';
  adopt = false;
  readonly violations: string[] = [];
  writes = 0;
  constructor(readonly memory: MemoryLattice) {}

  perform(lattice: string, name: string, action: Action): Promise<ActionResult> {
    if (isWrite(action)) {
      this.writes++;
      const owners = ownersOf(this.memory, name);
      const ours = owners === undefined || owners.includes(this.owner) || (this.adopt && owners.every((o) => o === null));
      if (!ours) this.violations.push(`${action.kind} on model "${name}" whose versions are owned by ${JSON.stringify(owners)}, by resource ${this.owner} (adopt: ${this.adopt})`);
      if (action.kind === 'put' && action.owner !== this.owner) this.violations.push(`put with owner ${action.owner} by ${this.owner}`);
    }
    return this.memory.perform(lattice, name, action);
  }
}

export const checkStatus = compile(ApplicationStatusSchema);
export const checkHookRequest = compile<HookRequest>(HookRequestSchema);

/** A hook answer Metacontroller can use: a schema-valid status, no children, sane resync. */
export function assertHookResponse(response: HookResponse, finalize: boolean): void {
  assert.deepEqual(Object.keys(response).filter((k) => !['status', 'children', 'resyncAfterSeconds', 'finalized'].includes(k)), []);
  assert.deepEqual(response.children, []);
  assert.ok(checkStatus(response.status), `invalid status: ${checkStatus.problems(response.status, 'status').join('; ')}`);
  assert.equal(response.status.conditions?.[0]?.type, 'Ready');
  if (response.resyncAfterSeconds !== undefined) assert.ok(Number.isInteger(response.resyncAfterSeconds) && response.resyncAfterSeconds > 0);
  if (finalize) assert.equal(typeof response.finalized, 'boolean');
  for (const c of response.status.conditions ?? []) assert.ok(c.message.length <= 1024);
}

/** The response the hook computes (never one reused from memory). */
export async function respond(hooks: Hooks, hook: HookName, request: HookRequest, log: typeof SILENT): Promise<HookResponse> {
  return (await hooks.run(hook, request, log)).response;
}

/** The hooks the fuzz properties run: the tests' defaults (support/http.ts) but for room for 10,000 objects. */
export function hooksFor(lattice: Lattice, tenancy: Tenancy, now: () => number = () => NOW, options: TestHooksOptions = {}) {
  return testHooks(lattice, { tenancy, now, cacheEntries: 10_000, ...options });
}

export type ChaosKind = Action['kind'];
export interface Chaos {
  kind: ChaosKind;
  result: ActionResult;
}
export const unavailableResult = fc.record({
  kind: fc.constant('unavailable' as const),
  reason: fc.constantFrom<UnavailableReason>('Disconnected', 'NoResponders', 'Timeout', 'StorageError', 'BadReply'),
  message: hostileString,
});
/** What a real wadm may answer instead: unreachable, refused, or changed under us (stale). */
export const chaos: fc.Arbitrary<Chaos> = fc.oneof(
  fc.record({ kind: fc.constantFrom<ChaosKind>('read-model', 'read-version', 'read-status'), result: unavailableResult }),
  fc.record({
    kind: fc.constantFrom<ChaosKind>('put', 'deploy', 'undeploy', 'delete'),
    result: fc.oneof(unavailableResult, fc.record({ kind: fc.constant('rejected' as const), message: hostileString }), fc.constant({ kind: 'stale' as const })),
  }),
);

// ---------------------------------------------------------------------------------------------
// HTTP harness
// ---------------------------------------------------------------------------------------------

export interface Harness {
  app: ReturnType<typeof build>['app'];
  /** The Lattice requests are sent to: swapped per case. */
  holder: { current: Lattice };
  /** Errors the server logged as bugs (500). */
  errors: string[];
}

/** The HTTP tier (support/http.ts) for one test, at info level, with a Lattice swapped per case. */
export function harness(t: Cleanups, tenancy: Tenancy, options: { bodyLimit?: number; now?: () => number } = {}): Harness {
  const errors: string[] = [];
  const onLog = (line: LogLine) => {
    const err = line['err'] as { message?: string; stack?: string } | undefined;
    if (line['msg'] === 'unhandled error' && errors.length < 5) errors.push(`${err?.message}\n${(err?.stack ?? '').split('\n').slice(0, 6).join('\n')}`);
  };
  const holder: { current: Lattice } = { current: new MemoryLattice() };
  const lattice: Lattice = { perform: (l, n, a) => holder.current.perform(l, n, a) };
  const { app } = build(t, { lattice, tenancy, cacheEntries: 10_000, logLevel: 'info', onLog, bodyLimit: options.bodyLimit ?? BODY_LIMIT, now: options.now });
  return { app, holder, errors };
}

export function post(h: Harness, hook: 'sync' | 'finalize', payload: string | Buffer, contentType = 'application/json') {
  return h.app.inject({ method: 'POST', url: `/${hook}`, headers: { 'content-type': contentType }, payload });
}

/** Invariant 1: 200 for a hook request, 400 for anything else, 413 above the limit, never 5xx. */
export function assertAnswered(h: Harness, res: { statusCode: number; body: string }, allowed: number[]): void {
  const detail = () => `HTTP ${res.statusCode}: ${res.body.slice(0, 300)}${h.errors.length > 0 ? `\nlogged: ${h.errors.join('\n')}` : ''}`;
  assert.ok(res.statusCode < 500, detail());
  assert.ok(allowed.includes(res.statusCode), detail());
  const body = JSON.parse(res.body) as Record<string, unknown>;
  if (res.statusCode !== 200) {
    assert.equal(typeof body['error'], 'string');
    assert.equal(typeof body['message'], 'string');
  }
}

/**
 * A full collection, then heapUsed. --expose-gc cannot be passed from inside a test file, but a
 * context created after the flag is set gets a global gc().
 */
export function exposeGc(): () => Promise<number> {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  return async () => {
    for (let i = 0; i < 4; i++) {
      gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
    return process.memoryUsage().heapUsed;
  };
}

// ---------------------------------------------------------------------------------------------
// Deep nesting and huge strings, described small and built inside the property
// ---------------------------------------------------------------------------------------------

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
  const request = clone(hookRequest(HELLO, { finalizing })) as unknown as Record<string, unknown> & { parent: Record<string, unknown> & { metadata: Record<string, unknown> } };
  const spec = request.parent['spec'] as { components: { properties: Record<string, unknown>; traits: { type: string; properties: Record<string, unknown> }[] }[]; [key: string]: unknown };
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
      request.parent['status'] = { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-11-30T11:00:00Z', message: MARK }, MARK], scalers: MARK };
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
  return JSON.stringify(helloWithMark(c.place, c.hook === 'finalize')).split(MARK_TEXT).join(nested(c.depth, c.shape));
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
    parent: { metadata: Record<string, unknown>; spec: Record<string, unknown> & { components: { name: string; properties: Record<string, unknown> }[] }; status?: unknown };
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
      request.parent.status = { conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: '2026-11-30T11:00:00Z', message: big, reason: big }] };
      break;
    case 'managed-fields':
      metadata['managedFields'] = [{ manager: 'kubectl', fieldsV1: big }];
      break;
  }
  return request as unknown as HookRequest;
}

/** Registers the last test of a fuzz file: nothing escaped and nothing polluted while its properties ran. */
export function checkAfterFuzzing(): void {
  describe('after fuzzing', () => {
    it('saw no unhandled rejection, no uncaught exception and no prototype pollution', () => {
      const cases = totals.reduce((sum, t) => sum + t.cases, 0);
      const failed = totals.filter((t) => t.failed).map((t) => t.title);
      console.log(`[fuzz] total: ${cases} cases in ${totals.length} properties; failed: ${failed.length > 0 ? failed.join(', ') : 'none'}`);
      assertNoPrototypePollution();
      assert.deepEqual(escaped, []);
    });
  });
}
