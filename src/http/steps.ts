// The shell around the core: asks the core for the next step, performs it, folds the result into
// the facts and asks again, until the core answers. The loop is bounded: a wadm that keeps
// contradicting itself ends as LatticeUnavailable rather than as a hung hook.
import { learn, NO_FACTS, type Action, type ActionResult, type LatticeFacts } from '../core/facts.js';
import type { HookResponse } from '../schema/hook.js';
import type { Prepared, Step } from '../core/sync.js';

export type Decide = (prepared: Prepared, facts: LatticeFacts, now: number) => Step;
export type Perform = (action: Action) => Promise<ActionResult>;

export interface Run {
  response: HookResponse;
  actions: Action[];
  facts: LatticeFacts;
}

/** Enough for read, put, deploy, a full prune of 50 versions and a status read, with retries. */
export const MAX_STEPS = 64;

export async function runSteps(decide: Decide, prepared: Prepared, perform: Perform, now: () => number): Promise<Run> {
  let facts = NO_FACTS;
  const actions: Action[] = [];
  for (;;) {
    const step = decide(prepared, facts, now());
    if ('answer' in step) return { response: step.answer, actions, facts };
    if (actions.length >= MAX_STEPS) {
      facts = { ...facts, unavailable: { reason: 'BadReply', message: `wadm gave inconsistent answers over ${MAX_STEPS} requests` } };
      continue;
    }
    actions.push(step.action);
    facts = learn(facts, step.action, await perform(step.action));
  }
}
