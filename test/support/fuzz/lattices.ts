// Lattices that check what reaches them: every call single-token and within the namespace's lattices
// (invariant 2), every write to a model this resource owns (invariant 3).
import assert from 'node:assert/strict';
import type { Action, ActionResult } from '../../../src/core/facts.js';
import type { Tenancy } from '../../../src/core/tenancy.js';
import { OWNER_ANNOTATION } from '../../../src/core/names.js';
import type { Lattice } from '../../../src/sync.js';
import { apiSubject, eventSubject, statusSubject, type ModelOperation } from '../../../src/lattice/subjects.js';
import type { MemoryLattice } from '../memory-lattice.js';

export const TOKEN = /^[-\w]+$/;

export const OPERATIONS: Record<Action['kind'], ModelOperation[]> = {
  'read-model': ['versions', 'get'],
  'read-version': ['get'],
  'read-status': ['status'],
  // The lattice's list, or where it cannot be listed the model's versions.
  'read-summary': ['get', 'versions'],
  'read-key': ['versions'],
  'read-list': ['get'],
  'read-hosts': [],
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
    assert.equal(`${action.key.lattice}-${action.key.name}`, lattice, "a read-key reads the own lattice's index key only");
    assertSingleTokens(
      action.key.lattice,
      action.key.name,
      { kind: 'read-version', version: 'v' },
      { ...tenancy, allows: () => true },
      namespace,
    );
    assert.ok(
      tenancy.allows(namespace, lattice),
      `namespace ${show(namespace)} read the index key of lattice ${show(lattice)}, which it may not use`,
    );
    return;
  }
  if (action.kind === 'read-list') {
    // The list of the lattice named like the application's own key: read only to learn what that
    // key holds, sent to a lattice the namespace need not be allowed.
    assert.equal(action.of, `${lattice}-${name}`, "a read-list reads the list of the lattice named like the application's own key only");
    assert.ok(TOKEN.test(action.of), `lattice ${show(action.of)} reached the Lattice`);
    assert.ok(
      tenancy.allows(namespace, lattice),
      `namespace ${show(namespace)} read the key of lattice ${show(lattice)}, which it may not use`,
    );
    assert.ok(Buffer.byteLength(apiSubject('wadm.api', action.of, 'get')) <= MAX_SUBJECT_BYTES, 'a list subject NATS would refuse');
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
    assert.ok(
      bytes <= MAX_SUBJECT_BYTES,
      `a ${bytes}-byte subject ${show(subject)} would make NATS close the connection (max_control_line 4096)`,
    );
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
    assert.deepEqual(
      this.violations.filter((v) => !except?.test(v)),
      [],
      'calls that reached the Lattice',
    );
  }
}

export const isWrite = (action: Action): boolean => !action.kind.startsWith('read-');

/** The owners of a model's versions, oldest first; undefined when there is no model. */
export function ownersOf(memory: MemoryLattice, name: string): (string | null)[] | undefined {
  const model = memory.model(name);
  if (!model || model.versions.size === 0) return undefined;
  return [...model.versions.values()].map((v) => v.owner);
}

/** Invariant 3: a write goes only to a model this resource owns by history (its oldest version's owner; or, that naming none, any version's, or adopting while every version is unowned). */
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
      // The oldest version's owner, when it names one, says whose the model is: a later version of
      // another owner is a stray of a racing first put (src/core/ownership.ts).
      const first = owners?.[0] ?? null;
      const ours =
        owners === undefined ||
        (first !== null ? first === this.owner : owners.includes(this.owner) || (this.adopt && owners.every((o) => o === null)));
      if (!ours)
        this.violations.push(
          `${action.kind} on model "${name}" whose versions are owned by ${JSON.stringify(owners)}, by resource ${this.owner} (adopt: ${this.adopt})`,
        );
      if (action.kind === 'put' && action.owner !== this.owner) this.violations.push(`put with owner ${action.owner} by ${this.owner}`);
    }
    return this.memory.perform(lattice, name, action);
  }
}
