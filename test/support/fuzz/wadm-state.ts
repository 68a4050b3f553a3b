// What the in-memory lattice (support/memory-lattice.ts) holds before a case, as a real wadm may: models of
// this resource, of other resources and of nobody, statuses fresh or stale; and what it may answer
// instead of doing what was asked.
import fc from 'fast-check';
import { applicationOf } from '../../../src/core/application.js';
import type { Action, ActionResult, UnavailableReason } from '../../../src/core/facts.js';
import { WADM_STATUS_TYPES, type WadmStatus } from '../../../src/lattice/wire.js';
import type { HookRequest } from '../../../src/schema/hook.js';
import type { MemoryLattice } from '../memory-lattice.js';
import { hostileString, NAMES, OWNERS, token } from './values.js';

export const statusInfo = fc.record({ type: fc.constantFrom(...WADM_STATUS_TYPES), message: hostileString }, { requiredKeys: ['type'] });
export const wadmStatus: fc.Arbitrary<WadmStatus> = fc.record(
  {
    status: statusInfo,
    scalers: fc.array(
      fc.record(
        {
          id: hostileString,
          kind: fc.oneof(fc.constantFrom('SpreadScaler', 'LinkScaler'), hostileString),
          name: hostileString,
          status: statusInfo,
        },
        { requiredKeys: ['status'] },
      ),
      { maxLength: 4 },
    ),
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
    memory.seed(
      s.name,
      s.versions.map((v) => [v.version, { owner: v.owner, contentHash: v.contentHash }]),
      deployed,
    );
    if (s.status) memory.setStatus(s.name, s.status, s.predatesDeploy);
  }
}

/** How the resource's own desired version is already present in wadm (needs the rendered version). */
export type DesiredSeed = 'absent' | 'ours' | 'ours-deployed' | 'ours-other-content' | 'foreign' | 'unowned';
export const desiredSeed = fc.constantFrom<DesiredSeed>(
  'absent',
  'absent',
  'ours',
  'ours-deployed',
  'ours-other-content',
  'foreign',
  'unowned',
);

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
    result: fc.oneof(
      unavailableResult,
      fc.record({ kind: fc.constant('rejected' as const), message: hostileString }),
      fc.constant({ kind: 'stale' as const }),
    ),
  }),
);
