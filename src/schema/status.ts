// The status we return to Metacontroller, which writes it as the resource's whole .status.
// Conditions follow kstatus: Ready is the summary; Reconciling and Stalled are abnormal-true.
import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from './kit.js';

export const PHASES = [
  'Deployed',
  'Reconciling',
  'Waiting',
  'Unhealthy',
  'Failed',
  'Undeployed',
  'Suspended',
  'Invalid',
  'Unknown',
] as const;
export type Phase = (typeof PHASES)[number];

export const CONDITION_TYPES = ['Ready', 'Reconciling', 'Stalled'] as const;
export type ConditionType = (typeof CONDITION_TYPES)[number];
export const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;
export type ConditionStatus = (typeof CONDITION_STATUSES)[number];

/** wadm's StatusType, capitalised like our phases. */
export const SCALER_STATES = ['Deployed', 'Reconciling', 'Waiting', 'Unhealthy', 'Failed', 'Undeployed'] as const;
export type ScalerState = (typeof SCALER_STATES)[number];

export const ConditionSchema = Type.Object(
  {
    type: StringEnum(CONDITION_TYPES, { description: 'Ready (the summary), Reconciling (work in progress) or Stalled (needs attention).' }),
    status: StringEnum(CONDITION_STATUSES, { description: 'True, False or Unknown.' }),
    reason: Type.String({ description: 'Machine-readable reason in CamelCase, stable across releases.' }),
    message: Type.String({ description: 'What is going on, for humans.' }),
    lastTransitionTime: Type.String({ format: 'date-time', description: 'When status last changed.' }),
    observedGeneration: Type.Integer({ description: 'metadata.generation this condition was computed from.' }),
  },
  { description: 'A kstatus condition.' },
);
export type Condition = Static<typeof ConditionSchema>;

/** The conditions of every resource the service writes, one per type. */
export const ConditionsSchema = Type.Array(ConditionSchema, {
  description: 'Ready, Reconciling and Stalled conditions (kstatus).',
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': ['type'],
});

export const ScalerStatusSchema = Type.Object(
  {
    kind: Type.String({ description: 'SpreadScaler, DaemonScaler or LinkScaler.' }),
    name: Type.String({ description: 'What the scaler manages: a component id, or a link.' }),
    status: StringEnum(SCALER_STATES, { description: 'State reported by wadm for this scaler.' }),
    message: Type.Optional(Type.String({ description: 'Message reported by wadm for this scaler.' })),
  },
  { description: 'One wadm scaler of the deployed application.' },
);
export type ScalerStatus = Static<typeof ScalerStatusSchema>;

export const ApplicationStatusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(Type.Integer({ description: 'metadata.generation of the spec this status describes.' })),
    lattice: Type.Optional(Type.String({ description: 'Lattice the application is deployed to.' })),
    formerLattices: Type.Optional(
      Type.Array(Type.String({ maxLength: 253 }), {
        maxItems: 16,
        description:
          'Lattices the application was in before spec.lattice (or the default lattice) changed, where it may still be: once the current lattice has the desired version deployed, the controller undeploys (deletionPolicy Orphan) or deletes (Delete) it there and drops the lattice from this list; finalize cleans them too.',
      }),
    ),
    version: Type.Optional(Type.String({ description: 'wadm version that the spec renders to (the desired version).' })),
    deployedVersion: Type.Optional(Type.String({ description: 'wadm version that wadm has deployed, if any.' })),
    deployedAt: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          'When deployedVersion was deployed (or first found deployed), while no replica has yet heard wadm report on it: ' +
          "until then wadm's status may still describe the previous version, so Ready stays False (Progressing). " +
          'Cleared once wadm reports, or after the deploy grace.',
      }),
    ),
    phase: Type.Optional(StringEnum(PHASES, { description: 'One-word summary: ' + PHASES.join(', ') + '.' })),
    message: Type.Optional(Type.String({ description: "Summary message, the same as the Ready condition's." })),
    scalers: Type.Optional(Type.Array(ScalerStatusSchema, { description: 'Per-scaler status reported by wadm.' })),
    conditions: Type.Optional(ConditionsSchema),
  },
  { description: 'State of the application in wadm, written by the controller.' },
);
export type ApplicationStatus = Static<typeof ApplicationStatusSchema>;
