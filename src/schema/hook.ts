// The Metacontroller hook envelope. Only what we read is typed; everything else (managedFields,
// the whole CompositeController, unknown fields) passes through untouched.
import { Type, type Static } from '@sinclair/typebox';
import { OpenObject } from './kit.js';
import type { ApplicationStatus } from './status.js';
import type { WasmCloudLatticeStatus } from './lattice.js';

const ParentMetadataFields = {
  name: Type.String({ minLength: 1 }),
  uid: Type.Optional(Type.String()),
  resourceVersion: Type.Optional(Type.String()),
  generation: Type.Optional(Type.Integer({ minimum: 0 })),
  labels: Type.Optional(OpenObject()),
  annotations: Type.Optional(OpenObject()),
  deletionTimestamp: Type.Optional(Type.String()),
};

export const ParentSchema = Type.Object({
  apiVersion: Type.Optional(Type.String()),
  kind: Type.Optional(Type.String()),
  metadata: Type.Object({ ...ParentMetadataFields, namespace: Type.String({ minLength: 1 }) }),
  // Checked later against the spec schema: a bad spec is a status, not a 400.
  spec: Type.Optional(Type.Unknown()),
  status: Type.Optional(Type.Unknown()),
});
export type Parent = Static<typeof ParentSchema>;

export const HookRequestSchema = Type.Object({
  controller: Type.Optional(OpenObject()),
  parent: ParentSchema,
  children: Type.Optional(Type.Unknown()),
  related: Type.Optional(Type.Unknown()),
  finalizing: Type.Optional(Type.Boolean()),
});
export type HookRequest = Static<typeof HookRequestSchema>;

/** A WasmCloudLattice's hook call: its parent is cluster-scoped (no namespace). */
export const LatticeHookRequestSchema = Type.Object({
  controller: Type.Optional(OpenObject()),
  parent: Type.Object({
    apiVersion: Type.Optional(Type.String()),
    kind: Type.Optional(Type.String()),
    metadata: Type.Object(ParentMetadataFields),
    spec: Type.Optional(Type.Unknown()),
    status: Type.Optional(Type.Unknown()),
  }),
  children: Type.Optional(Type.Unknown()),
  related: Type.Optional(Type.Unknown()),
  finalizing: Type.Optional(Type.Boolean()),
});
export type LatticeHookRequest = Static<typeof LatticeHookRequestSchema>;

/** The answer to a WasmCloudLattice's sync: a status, never children. */
export interface LatticeHookResponse {
  status: WasmCloudLatticeStatus;
  children: [];
  resyncAfterSeconds?: number;
}

/** The hooks Metacontroller calls: sync for a living object, finalize for one being deleted. */
export type HookName = 'sync' | 'finalize';

/** Every hook the service serves, as metrics and logs name it: a WasmCloudLattice's sync is `lattice`. */
export type HookLabel = HookName | 'lattice';

/** Metacontroller decodes the answer case-sensitively, strictly for hook v2: no other keys. */
export interface HookResponse {
  status: ApplicationStatus;
  children: [];
  resyncAfterSeconds?: number;
  finalized?: boolean;
}
