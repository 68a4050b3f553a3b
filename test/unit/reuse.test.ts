// The reuse rule as one property: once an answer is reused, every input it depends on (the
// object, the hook, the policy, max_payload, and each event that replaces or withdraws the
// Knowledge stamp, as lattice/knowledge.ts lists them) stops its reuse at the next call, and
// reuse resumes once the application settles again. Real Answers, hooks and Knowledge; wadm is a
// MemoryLattice behind an adapter that uses Knowledge as the gateway does.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import pino from 'pino';
import { contradicted } from '../../src/core/census.js';
import type { Action, ActionResult, LatticeStatus } from '../../src/core/facts.js';
import { fromPolicy, parsePolicy, type Tenancy } from '../../src/core/tenancy.js';
import { createHooks } from '../../src/sync.js';
import type { HookName } from '../../src/schema/hook.js';
import { Knowledge } from '../../src/lattice/knowledge.js';
import { testClock } from '../support/clock.js';
import { MemoryLattice } from '../support/memory-lattice.js';
import { hookRequest, wasmApp } from '../support/resources.js';

const SILENT = pino({ level: 'silent' });
const LATTICE = 'default';
const NAME = 'hello-world';
const LIVENESS_MS = 5_000;
const MODEL_TTL_MS = 60_000;
const CHECK_PERIOD_MS = 30_000;
const CAPACITY = 4;
const DEPLOYED: LatticeStatus = { status: { type: 'deployed' } };

/** One service's view of one application: hooks over a real Knowledge, wadm in memory. */
function stage() {
  const clock = testClock();
  const memory = new MemoryLattice();
  const knowledge = new Knowledge({
    capacity: CAPACITY,
    modelTtlMs: MODEL_TTL_MS,
    deployGraceMs: 10_000,
    livenessMs: LIVENESS_MS,
    checkPeriodMs: CHECK_PERIOD_MS,
    now: clock.now,
  });
  const inputs = {
    policy: fromPolicy(parsePolicy('rules: [{namespaces: ["*"], lattices: ["*"]}]'), LATTICE),
    maxPayloadBytes: 1024 * 1024,
  };
  const tenancy: Tenancy = {
    defaultLattice: LATTICE,
    rule: 'policy',
    allows: (n, l) => inputs.policy.allows(n, l),
    revision: () => inputs.policy,
  };
  /** The lattice's list compared with what is remembered, as lattice/census.ts does once a period. */
  const census = (lattice: string) => {
    const seq = knowledge.listStarted(lattice);
    const listed = [...memory.models].map(([model, { versions, deployed }]) => ({
      name: model,
      version: [...versions.keys()].at(-1)!,
      deployed,
      ...(memory.statuses.has(model) ? { status: memory.statuses.get(model)!.status } : {}),
    }));
    knowledge.checked(lattice, clock.now(), contradicted(knowledge.remembered(lattice), listed));
    knowledge.listed(lattice, listed, clock.now(), seq);
    knowledge.answered(lattice);
  };
  /** As the gateway reads a summary: remembered, or the lattice's list (core/summary.ts). */
  const summary = (lattice: string, name: string): ActionResult => {
    knowledge.manage(lattice, name);
    if (knowledge.hasModel(lattice, name)) return { kind: 'summary', summary: null };
    if (knowledge.needsCheck(lattice, name)) census(lattice);
    const remembered = knowledge.summary(lattice, name);
    if (remembered && !knowledge.isAlive(lattice)) knowledge.answered(lattice); // the shared probe
    if (remembered) return { kind: 'summary', summary: remembered };
    if (!knowledge.listings.has(lattice)) census(lattice);
    return { kind: 'summary', summary: knowledge.takeSummary(lattice, name) ?? null };
  };
  /** As lattice/gateway.ts uses Knowledge: remembered model and status first, every wadm answer noted. */
  const perform = async (lattice: string, name: string, action: Action): Promise<ActionResult> => {
    if (action.kind === 'read-summary') return summary(lattice, name);
    if (action.kind === 'read-model' && action.lattice === undefined) knowledge.manage(lattice, name);
    if (action.kind === 'read-model' && !action.fresh && knowledge.needsCheck(lattice, name)) census(lattice);
    if (action.kind === 'read-model' && !action.fresh) {
      const remembered = knowledge.model(lattice, name);
      if (remembered && !knowledge.isAlive(lattice)) knowledge.answered(lattice); // the shared probe
      if (remembered) return { kind: 'model', model: remembered };
    }
    if (action.kind === 'read-status') {
      const raw = memory.statuses.get(name)?.status ?? { status: { type: 'undeployed' } };
      return { kind: 'status', status: knowledge.status(lattice, name) ?? knowledge.rememberStatus(lattice, name, raw, false) };
    }
    const result = await memory.perform(lattice, name, action);
    knowledge.answered(lattice);
    if (result.kind === 'model' && result.model === null) knowledge.absent(lattice, name);
    if (action.kind === 'deploy' && result.kind === 'done') knowledge.deployed(lattice, name);
    return result;
  };
  const sources: string[] = [];
  const hooks = createHooks({
    lattice: { perform, knowledge, maxPayloadBytes: () => inputs.maxPayloadBytes },
    tenancy,
    budgetMs: 1000,
    now: clock.now,
    cacheEntries: CAPACITY,
    onAnswer: (source) => void sources.push(source),
  });
  let resourceVersion = 1;
  let lastJson = '';
  // As Metacontroller does: the last answer's status comes back with the object.
  const request = () => {
    const r = hookRequest(wasmApp().build());
    Object.assign(r.parent.metadata, { resourceVersion: String(resourceVersion) });
    if (lastJson) r.parent.status = (JSON.parse(lastJson) as { status?: Record<string, unknown> }).status;
    return r;
  };
  /** One hook call; whether its answer was reused. */
  const call = async (hook: HookName = 'sync'): Promise<boolean> => {
    lastJson = (await hooks.answer(hook, request(), SILENT)).json;
    return sources.at(-1) === 'memory';
  };
  const ready = () => (JSON.parse(lastJson) as { status: { phase?: string } }).status.phase === 'Deployed';
  /** wadm publishes a status on its stream, as watch.ts passes it on. */
  const wadmReports = (status: LatticeStatus) => {
    memory.setStatus(NAME, status);
    knowledge.rememberStatus(LATTICE, NAME, status, true);
  };
  return { clock, memory, knowledge, inputs, hooks, call, ready, wadmReports, edit: () => void resourceVersion++ };
}

type Stage = ReturnType<typeof stage>;

/** Each input an answer depends on: what changes it, the hook of the next call, what undoes it. */
const INPUTS: Record<string, { apply(s: Stage): void; hook?: HookName; undo?(s: Stage): void }> = {
  'the object changed (resourceVersion)': { apply: (s) => s.edit() },
  'another hook': { apply: () => undefined, hook: 'finalize' },
  'the lattice policy reloaded': {
    apply: (s) => void (s.inputs.policy = fromPolicy(parsePolicy('rules: [{namespaces: ["*"], lattices: ["*"]}]'), LATTICE)),
  },
  'max_payload changed': { apply: (s) => void (s.inputs.maxPayloadBytes += 1024) },
  'a new NATS connection': { apply: (s) => s.knowledge.reset() },
  'wadm announced a deploy or undeploy': { apply: (s) => s.knowledge.forgetModel(LATTICE, NAME) },
  'wadm announced a lattice-wide change': { apply: (s) => s.knowledge.forgetLattice(LATTICE) },
  'a status message': { apply: (s) => s.wadmReports(DEPLOYED) },
  'our deploy acknowledged': { apply: (s) => s.knowledge.deployed(LATTICE, NAME) },
  'a model forgotten after a failed request': { apply: (s) => s.knowledge.remember(LATTICE, NAME, undefined, Infinity) },
  'subscriptions down': { apply: (s) => s.knowledge.watching(LATTICE, false), undo: (s) => s.knowledge.watching(LATTICE, true) },
  'wadm silent past the liveness window': { apply: (s) => s.clock.advance(LIVENESS_MS) },
  'the model TTL passed': { apply: (s) => s.clock.advance(MODEL_TTL_MS) },
  // wadm answering other calls all along: only the period stops the reuse, not the liveness window.
  'a check period passed without a list': { apply: (s) => (s.clock.advance(CHECK_PERIOD_MS), s.knowledge.answered(LATTICE)) },
  "the lattice's list contradicts the model": { apply: (s) => s.knowledge.checked(LATTICE, s.clock.now(), [NAME]) },
  'a read found no model': { apply: (s) => s.knowledge.absent(LATTICE, NAME) },
  'wadm lost its store, a check period ago': { apply: (s) => (s.memory.models.clear(), s.clock.advance(CHECK_PERIOD_MS)) },
  'Knowledge full of other applications': {
    apply: (s) => Array.from({ length: CAPACITY }, (_, i) => s.knowledge.manage(LATTICE, `other-${i}`)),
  },
  'answers full of other objects': {
    apply: (s) =>
      Array.from({ length: CAPACITY }, (_, i) =>
        s.hooks.answers.application({
          ...hookRequest(wasmApp().build()).parent,
          metadata: { ...hookRequest(wasmApp().build()).parent.metadata, uid: `other-${i}`, resourceVersion: '1' },
        }),
      ),
  },
};

/** Calls until an answer is reused, telling wadm's stream that what was deployed is running. */
async function settle(s: Stage): Promise<void> {
  for (let calls = 0; calls < 8; calls++) {
    if (await s.call()) return;
    if (s.memory.model(NAME)?.deployed && !s.ready()) s.wadmReports(DEPLOYED);
  }
  assert.fail('the application never settled: reuse would never happen, and the property would hold vacuously');
}

describe('the reuse of an answer', () => {
  it('stops at the next call after any input it depends on changes, and resumes once settled', async () => {
    const names = Object.keys(INPUTS);
    const sequences = fc.array(fc.constantFrom(...names), { minLength: 1, maxLength: 10 });
    await fc.assert(
      fc.asyncProperty(sequences, async (sequence) => {
        const s = stage();
        await settle(s);
        for (const name of sequence) {
          const input = INPUTS[name]!;
          input.apply(s);
          assert.equal(await s.call(input.hook), false, `reused after: ${name}`);
          input.undo?.(s);
          await settle(s);
        }
      }),
      { seed: Number(process.env['FUZZ_SEED'] ?? 20261202), numRuns: 200, examples: [[names]] },
    );
  });

  it('is what happens when nothing changes: the same answer object, with no request to wadm', async () => {
    const s = stage();
    await settle(s);
    const actions = s.memory.lattices.length;
    for (let i = 0; i < 5; i++) assert.equal(await s.call(), true);
    assert.equal(s.memory.lattices.length, actions, 'nothing reached wadm');
  });
});
