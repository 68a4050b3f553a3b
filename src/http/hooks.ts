// The hook handlers: prepare the request, run the core's steps against the lattice, log what
// changed. No HTTP here (src/server.ts) and no decisions (src/sync.ts, src/finalize.ts).
import type { Logger } from 'pino';
import type { Action, ActionResult, Write } from '../core/facts.js';
import { decideFinalize } from '../core/finalize.js';
import { runSteps, type Decide, type Run } from './steps.js';
import { answerOf, AnswerMemo, sameSnapshot, type Answer } from './answers.js';
import { Derivations } from './derivations.js';
import type { HookRequest, HookResponse } from '../schema/hook.js';
import { decideSync, prepare, type Prepared } from '../core/sync.js';
import type { Tenancy } from '../core/tenancy.js';

/** Where actions are performed: wadm over NATS in production, memory in unit tests. */
export interface Lattice {
  perform(lattice: string, name: string, action: Action): Promise<ActionResult>;
  /** What is known about an application, as identities (see AnswerMemo); absent: answers are never reused. */
  snapshot?(lattice: string, name: string): unknown[] | undefined;
}

export interface HookDeps {
  lattice: Lattice;
  tenancy: Tenancy;
  /** Time left for wadm requests in one hook call; past it, the call answers LatticeUnavailable. */
  budgetMs: number;
  now: () => number;
  /** After every computed answer (not those reused from memory, which changed nothing). */
  onRun?: (hook: HookName, run: Run, prepared: Prepared) => void;
  onAnswer?: (source: 'memory' | 'computed') => void;
  /** Parents whose validation and rendered manifest are kept (default 10,000). */
  cacheEntries?: number;
}

export type HookName = 'sync' | 'finalize';

export interface Hooks {
  sync(request: HookRequest, log: Logger): Promise<HookResponse>;
  finalize(request: HookRequest, log: Logger): Promise<HookResponse>;
  /** The serialised answer, from memory when nothing it depends on changed since the last one. */
  answer(hook: HookName, request: HookRequest, log: Logger): Promise<Answer>;
  readonly memo: AnswerMemo;
}

export function createHooks(deps: HookDeps): Hooks {
  const derivations = new Derivations(deps.cacheEntries ?? 10_000, deps.tenancy.defaultLattice);

  const memo = new AnswerMemo(deps.cacheEntries ?? 10_000);

  async function run(hook: HookName, decide: Decide, request: HookRequest, log: Logger): Promise<Run> {
    const prepared = prepare(request, deps.tenancy, derivations.of(request.parent));
    const deadline = deps.now() + deps.budgetMs;
    const perform = (action: Action): Promise<ActionResult> =>
      deps.now() > deadline
        ? Promise.resolve({ kind: 'unavailable', reason: 'Timeout', message: `no time left within this hook call (${deps.budgetMs} ms)` })
        : deps.lattice.perform(prepared.lattice, prepared.ref.name, action);
    const result = await runSteps(decide, prepared, perform, deps.now);
    logRun(log, hook, prepared, result);
    deps.onRun?.(hook, result, prepared);
    return result;
  }

  async function answer(hook: HookName, request: HookRequest, log: Logger): Promise<Answer> {
    const { uid, resourceVersion } = request.parent.metadata;
    const snapshot = () => {
      const derived = derivations.of(request.parent);
      return deps.lattice.snapshot?.(derived.lattice, derived.ref.name);
    };
    const policy = deps.tenancy.revision?.();
    if (uid === undefined || resourceVersion === undefined) return answerOf((await run(hook, DECIDE[hook], request, log)).response);
    const known = memo.find(uid, resourceVersion, hook, snapshot, policy);
    deps.onAnswer?.(known ? 'memory' : 'computed');
    if (known) return known;
    const before = snapshot();
    const result = await run(hook, DECIDE[hook], request, log);
    const computed = answerOf(result.response);
    // Only a settled answer that needed nothing new from wadm, with nothing changing meanwhile.
    const settled = result.response.resyncAfterSeconds === undefined && result.facts.writes.length === 0 && !result.facts.unavailable;
    // null: the answer needed nothing from the lattice (an invalid spec, a denied lattice).
    const after = result.actions.length === 0 ? null : snapshot();
    if (settled && (after === null || (after !== undefined && sameSnapshot(before, after)))) {
      memo.keep(uid, { resourceVersion, hook, snapshot: after, policy, answer: computed });
    } else memo.forget(uid);
    return computed;
  }

  return {
    sync: async (request, log) => (await run('sync', decideSync, request, log)).response,
    finalize: async (request, log) => (await run('finalize', decideFinalize, request, log)).response,
    answer,
    memo,
  };
}

const DECIDE: Record<HookName, Decide> = { sync: decideSync, finalize: decideFinalize };


function identity(prepared: Prepared) {
  return {
    namespace: prepared.ref.namespace,
    name: prepared.ref.name,
    generation: prepared.ref.generation,
    lattice: prepared.lattice,
    version: prepared.rendered?.version,
  };
}

/** Info for what changed (writes, phase changes); debug for the many calls that change nothing. */
function logRun(log: Logger, hook: HookName, prepared: Prepared, run: Run): void {
  const { status } = run.response;
  const previousPhase = (prepared.previousStatus as { phase?: unknown } | undefined)?.phase;
  const changed = run.facts.writes.length > 0 || status.phase !== previousPhase;
  // A settled resync is the common call: build no child logger for it unless debug is on.
  if (!changed && !log.isLevelEnabled('debug')) return;
  const app = log.child(identity(prepared));
  for (const write of run.facts.writes) app.info({ hook }, describeWrite(write));
  const fields = { hook, phase: status.phase, requests: run.actions.length, resyncAfterSeconds: run.response.resyncAfterSeconds };
  if (status.phase !== previousPhase) app.info({ ...fields, previousPhase, reason: status.conditions?.[0]?.reason }, status.message ?? '');
  else app.debug(fields, 'no change');
}

function describeWrite(write: Write): string {
  switch (write.kind) {
    case 'put':
      return `put version ${write.version}`;
    case 'deploy':
      return `deployed version ${write.version}`;
    case 'undeploy':
      return 'undeployed';
    case 'delete':
      return write.version === null ? 'deleted the application and all its versions' : `pruned version ${write.version}`;
  }
}

