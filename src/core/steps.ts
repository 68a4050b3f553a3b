// The loop between the core and whatever performs its actions: ask decide() for the next step,
// perform the action, fold the result into the facts, until decide() answers. Pure but for the
// `perform` it is given: wadm over NATS in the service, memory in the tests.
import type { Call } from './application.js';
import type { Step } from './decide.js';
import { learn, NO_FACTS, type Action, type ActionResult, type LatticeFacts, type Write } from './facts.js';
import type { HookResponse } from '../schema/hook.js';

/**
 * Enough for read, ownership reads, sizes of up to 50 versions and the prunes to make room, put,
 * deploy, a status read and the clean-up of former lattices.
 */
export const MAX_STEPS = 160;

/** One hook call as the core saw it: what it was asked, what it did, what it learnt, its answer. */
export interface Run {
  call: Call;
  response: HookResponse;
  actions: Action[];
  facts: LatticeFacts;
}

/** Asks the core for the next step, performs it, folds the result in, until the core answers. */
export async function runSteps(
  decide: (call: Call, facts: LatticeFacts) => Step,
  call: Call,
  perform: (action: Action) => Promise<ActionResult>,
): Promise<Run> {
  let facts = NO_FACTS;
  const actions: Action[] = [];
  for (;;) {
    const step = decide(call, facts);
    if ('answer' in step) return { call, response: step.answer, actions, facts };
    // The core answers a call past its bound whatever else it knows: asking on would spin here
    // without a single await, and wedge the process.
    if (facts.exhausted) throw new Error(`the core asked for ${step.action.kind} after ${actions.length} requests, past its bound`);
    // A wadm that keeps contradicting itself ends as LatticeUnavailable rather than a hung hook.
    if (actions.length >= MAX_STEPS) {
      const { lattice } = step.action;
      facts = { ...facts, exhausted: lattice === undefined ? { requests: actions.length } : { requests: actions.length, lattice } };
      continue;
    }
    actions.push(step.action);
    facts = learn(facts, step.action, await perform(step.action));
  }
}

/** The name of a write in logs and in wadm_writes_total. */
export function writeOperation(write: Write): 'put' | 'deploy' | 'undeploy' | 'delete' | 'prune' {
  if (write.kind === 'delete') return write.version === null ? 'delete' : 'prune';
  return write.kind;
}
