// The hooks under fuzzing and what their answers must be: the core through testHooks (support/http.ts),
// the HTTP layer through build(t), under three tenancy policies; an answer must be one Metacontroller can
// use, and HTTP must answer 200, 400 or 413, never 5xx.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { defaultOnly, fromPolicy, type Tenancy } from '../../../src/core/tenancy.js';
import type { Hooks, Lattice } from '../../../src/sync.js';
import type { HookName } from '../../../src/schema/hook.js';
import { HookRequestSchema, type HookRequest, type HookResponse } from '../../../src/schema/hook.js';
import { ApplicationStatusSchema } from '../../../src/schema/status.js';
import { compile } from '../../../src/schema/validator.js';
import { build, testHooks, type TestHooksOptions } from '../http.js';
import type { LogLine } from '../logs.js';
import { MemoryLattice } from '../memory-lattice.js';
import type { Cleanups } from '../service.js';
import { NOW, SILENT } from './run.js';

export const BODY_LIMIT = 16 * 1024 * 1024;
/** Smaller than production, so multi-megabyte cases cross it: above it, 413 is the right answer. */
export const SMALL_BODY_LIMIT = 2 * 1024 * 1024;

export const TENANCIES: Record<string, Tenancy> = {
  'default-only': defaultOnly('default'),
  'any-lattice': fromPolicy({ rules: [{ namespaces: ['*'], lattices: ['*'] }] }, 'default'),
  'own-namespace': fromPolicy({ rules: [{ namespaces: ['team-*', '*'], lattices: ['{namespace}', 'default', 'other'] }] }, 'default'),
};
export const tenancyName = fc.constantFrom(...Object.keys(TENANCIES));
export const tenancyOf = (name: string): Tenancy => TENANCIES[name]!;

export const checkStatus = compile(ApplicationStatusSchema);
export const checkHookRequest = compile<HookRequest>(HookRequestSchema);

/** A hook answer Metacontroller can use: a schema-valid status, no children, sane resync. */
export function assertHookResponse(response: HookResponse, finalize: boolean): void {
  assert.deepEqual(
    Object.keys(response).filter((k) => !['status', 'children', 'resyncAfterSeconds', 'finalized'].includes(k)),
    [],
  );
  assert.deepEqual(response.children, []);
  assert.ok(checkStatus(response.status), `invalid status: ${checkStatus.problems(response.status, 'status').join('; ')}`);
  assert.equal(response.status.conditions?.[0]?.type, 'Ready');
  // Jittered per resource to a tenth of a second (core/status.ts: resyncJitter).
  if (response.resyncAfterSeconds !== undefined)
    assert.ok(
      /^\d+(\.\d)?$/.test(String(response.resyncAfterSeconds)) && response.resyncAfterSeconds > 0,
      String(response.resyncAfterSeconds),
    );
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
    if (line['msg'] === 'unhandled error' && errors.length < 5)
      errors.push(`${err?.message}\n${(err?.stack ?? '').split('\n').slice(0, 6).join('\n')}`);
  };
  const holder: { current: Lattice } = { current: new MemoryLattice() };
  const lattice: Lattice = { perform: (l, n, a) => holder.current.perform(l, n, a) };
  const { app } = build(t, {
    lattice,
    tenancy,
    cacheEntries: 10_000,
    logLevel: 'info',
    onLog,
    bodyLimit: options.bodyLimit ?? BODY_LIMIT,
    now: options.now,
  });
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
