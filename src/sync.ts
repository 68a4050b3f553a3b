// The sync hook (and finalize, its last call): the parent in, the desired state forwarded to wadm,
// the lattice's status out. Between HTTP (server.ts) and the core (core/decide.ts): make the call,
// run the core's steps (core/steps.ts) against the lattice (wadm over NATS, lattice/) until it
// answers, remember what is worth remembering, log what changed, and ask http/answers.ts (the one
// owner of reuse) whether a kept answer may be given again.
import type { Logger } from 'pino';
import { callOf, type Application, type Call } from './core/application.js';
import { decideFinalize, decideSync, memorable, type Step } from './core/decide.js';
import type { Action, ActionResult, LatticeFacts, ModelFacts, Write } from './core/facts.js';
import { runSteps, writeOperation, type Run } from './core/steps.js';
import type { Tenancy } from './core/tenancy.js';
import { withinDeadline } from './plumbing/deadline.js';
import type { HookName, HookRequest, HookResponse } from './schema/hook.js';
import { answerOf, Answers, type Answer } from './http/answers.js';

/** Where actions are performed: wadm over NATS in production, memory in unit tests. */
export interface Lattice {
  perform(lattice: string, name: string, action: Action): Promise<ActionResult>;
  /** What this replica remembers of wadm; absent: nothing is remembered and no answer is reused. */
  knowledge?: {
    stamp(lattice: string, name: string): object | undefined;
    checkpoint(): number;
    remember(lattice: string, name: string, model: ModelFacts | undefined, checkpoint: number): void;
    rememberSizes(lattice: string, name: string, model: ModelFacts): void;
  };
  /** The NATS server's max_payload, while connected. */
  maxPayloadBytes?(): number | undefined;
}

export interface HookDeps {
  lattice: Lattice;
  tenancy: Tenancy;
  /** Time left for wadm requests in one hook call; past it, the call answers LatticeUnavailable. */
  budgetMs: number;
  now: () => number;
  /** After every computed answer (not those reused, which changed nothing). */
  onRun?: (hook: HookName, run: Run) => void;
  onAnswer?: (source: 'memory' | 'computed') => void;
  /** An answer reused from memory: the application is as the last computed answer left it. */
  onReused?: (app: Application) => void;
  /** Objects whose application and settled answer are kept (CACHE_ENTRIES). */
  cacheEntries: number;
  /** How long after a deploy wadm's latest status is taken to describe it without other evidence (core/evidence.ts). */
  deployGraceMs?: number;
}

export interface Hooks {
  /** The serialised answer, reused when nothing it depends on changed since the last one (then at once, not as a promise). */
  answer(hook: HookName, request: HookRequest, log: Logger, caller?: Caller): Answer | Promise<Answer>;
  run(hook: HookName, request: HookRequest, log: Logger, caller?: Caller): Promise<Run>;
  readonly answers: Answers;
}

/** Who is waiting for the answer: once they hung up, the call performs nothing more. */
export interface Caller {
  gone(): boolean;
  /**
   * When the call arrived, on performance.now(): its budget counts from there, the time its body
   * took to arrive and be parsed included. Absent: from when the hook starts on it.
   */
  arrivedAt?: number;
}

const STILL_THERE: Caller = { gone: () => false };

const DECIDE: Record<HookName, (call: Call, facts: LatticeFacts) => Step> = { sync: decideSync, finalize: decideFinalize };

export function createHooks(deps: HookDeps): Hooks {
  const { knowledge } = deps.lattice;
  const answers = new Answers(deps.cacheEntries, deps.tenancy.defaultLattice, {
    policy: () => deps.tenancy.revision?.(),
    maxPayloadBytes: () => deps.lattice.maxPayloadBytes?.(),
    ...(knowledge ? { stamp: (lattice: string, name: string) => knowledge.stamp(lattice, name) } : {}),
  });

  // Calls for one object run one after the other (Metacontroller sends one at a time; a second
  // comes only after it gave up on the first): a call it abandoned never writes after its successor.
  const inFlight = new Map<string, Promise<unknown>>();

  async function run(hook: HookName, request: HookRequest, log: Logger, caller = STILL_THERE): Promise<Run> {
    const key = request.parent.metadata.uid ?? `${request.parent.metadata.namespace}/${request.parent.metadata.name}`;
    const previous = inFlight.get(key);
    const started = startedAt(deps, caller);
    const mine = (previous ? until(previous, started.endsAt) : Promise.resolve()).then(() => runNow(hook, request, log, caller, started));
    inFlight.set(key, mine);
    return mine.finally(() => {
      if (inFlight.get(key) === mine) inFlight.delete(key);
    });
  }

  async function runNow(hook: HookName, request: HookRequest, log: Logger, caller: Caller, started: Started): Promise<Run> {
    const app = answers.application(request.parent);
    // Taken now, before any await lets another call derive its own application.
    const body = answers.takeBody(app);
    const call = callOf(request, deps.tenancy, {
      app,
      now: started.now,
      maxPayloadBytes: deps.lattice.maxPayloadBytes?.(),
      deployGraceMs: deps.deployGraceMs,
      body: () => body,
    });
    const { lattice, ref } = call.app;
    const perform = (action: Action): Promise<ActionResult> => {
      const stop = caller.gone()
        ? 'the caller hung up'
        : deps.now() > started.deadline || performance.now() >= started.endsAt
          ? `no time left within this hook call (${deps.budgetMs} ms)`
          : undefined;
      if (stop) return Promise.resolve({ kind: 'unavailable', reason: 'Timeout', message: stop });
      return deps.lattice.perform(action.lattice ?? lattice, ref.name, action);
    };
    const checkpoint = knowledge?.checkpoint() ?? 0;
    // Every wait an action makes is cut to the time the call has left (plumbing/deadline.ts): one
    // deadline for all the call's steps, set once rather than around each action (each setting
    // copies the async context, ~4 times per new application).
    const result = await withinDeadline(started.endsAt, () => runSteps(DECIDE[hook], call, perform));
    const model = memorable(call, result.facts);
    if (model !== null && typeof model === 'object' && 'sizesOf' in model) knowledge?.rememberSizes(lattice, ref.name, model.sizesOf);
    else if (model !== 'unchanged') knowledge?.remember(lattice, ref.name, model ?? undefined, checkpoint);
    logRun(log, hook, result);
    deps.onRun?.(hook, result);
    return result;
  }

  function answer(hook: HookName, request: HookRequest, log: Logger, caller = STILL_THERE): Answer | Promise<Answer> {
    const consulted = answers.consult(hook, request);
    if (consulted === null) return run(hook, request, log, caller).then((result) => answerOf(result.response));
    deps.onAnswer?.(consulted.reused ? 'memory' : 'computed');
    if (consulted.reused && deps.onReused) deps.onReused(answers.application(request.parent));
    return consulted.reused ?? run(hook, request, log, caller).then(consulted.record);
  }

  return { answer, run, answers };
}

/** When a call started, on the hooks' clock, and when its budget ends, on that clock and on the monotonic one. */
interface Started {
  now: number;
  /** On the hooks' clock (tests move it by hand). */
  deadline: number;
  /** On performance.now(). */
  endsAt: number;
}

function startedAt(deps: HookDeps, caller: Caller): Started {
  const endsAt = (caller.arrivedAt ?? performance.now()) + deps.budgetMs;
  const now = deps.now();
  return { now, deadline: now + (endsAt - performance.now()), endsAt };
}

/** Waits for the call before (whatever its outcome) until the deadline, when this call stops waiting and performs nothing. */
function until(previous: Promise<unknown>, endsAt: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, endsAt - performance.now()))));
  return Promise.race([previous.then(noop, noop), expired]).finally(() => clearTimeout(timer));
}

const noop = (): void => undefined;

/** Info for what wadm confirmed and for phase changes, warn for failed writes, debug for the many calls that change nothing. */
function logRun(log: Logger, hook: HookName, run: Run): void {
  const { status } = run.response;
  const { app, previousStatus } = run.call;
  const previousPhase = (previousStatus as { phase?: unknown } | undefined)?.phase;
  const phaseChanged = status.phase !== previousPhase;
  // Every call has a debug line; writes and phase changes are info, failed writes warn. A settled
  // resync is the common call, and at warn a new application writes nothing: build no child logger
  // (pino redacts its bindings, ~10 KiB per call) unless one of its lines will be written.
  const infoLines = run.facts.writes.length > 0 || phaseChanged;
  const warnLines = run.facts.failed.length > 0;
  const written = log.isLevelEnabled('debug') || (infoLines && log.isLevelEnabled('info')) || (warnLines && log.isLevelEnabled('warn'));
  if (!written) return;
  const version = app.valid ? app.manifest.version : undefined;
  const child = log.child({
    namespace: app.ref.namespace,
    name: app.ref.name,
    generation: app.ref.generation,
    lattice: app.lattice,
    version,
  });
  for (const write of run.facts.writes) child.info({ hook }, describeWrite(write));
  for (const { write, reason } of run.facts.failed)
    child.warn({ hook, operation: writeOperation(write), reason }, `could not ${writeOperation(write)}: ${reason}`);
  const fields = { hook, phase: status.phase, requests: run.actions.length, resyncAfterSeconds: run.response.resyncAfterSeconds };
  if (phaseChanged) child.info({ ...fields, previousPhase, reason: status.conditions?.[0]?.reason }, status.message ?? '');
  // Who holds a model that is not ours may be another tenant: its name goes to debug only.
  if (status.conditions?.[0]?.reason === 'OwnershipConflict' && run.facts.model) {
    child.debug({ owners: [...new Set(Object.values(run.facts.model.known).map((v) => v.owner))] }, 'owners of the versions read');
  } else child.debug(fields, 'no change');
}

function describeWrite(write: Write): string {
  const done = describeWriteHere(write);
  return write.lattice === undefined ? done : `${done} in former lattice ${write.lattice}`;
}

function describeWriteHere(write: Write): string {
  switch (write.kind) {
    case 'put':
      return `put version ${write.version}`;
    case 'deploy':
      if (write.adopting !== undefined)
        return `deployed version ${write.version}, adopting version ${write.adopting} deployed outside Kubernetes`;
      if (write.moving !== undefined) return `deployed version ${write.version}, moving from lattice ${write.moving}`;
      return write.replacing
        ? `deployed version ${write.version}, replacing ${write.replacing.deployed ?? 'nothing'} deployed outside Kubernetes`
        : `deployed version ${write.version}`;
    case 'undeploy':
      return 'undeployed';
    case 'delete':
      return write.version === null ? 'deleted the application and all its versions' : `pruned version ${write.version}`;
  }
}
