// wadm 0.21's wire types (wadm-types 0.8 api.rs), as schemas so every reply and status message is
// checked before use. Only the fields we read are required; wadm may add more.
import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../schema/kit.js';

/** wadm's StatusType; `compensating` and `ready` are old aliases wadm still accepts. */
export const WADM_STATUS_TYPES = [
  'waiting',
  'undeployed',
  'reconciling',
  'deployed',
  'failed',
  'unhealthy',
  'compensating',
  'ready',
] as const;

const StatusInfoSchema = Type.Object({
  type: StringEnum(WADM_STATUS_TYPES),
  message: Type.Optional(Type.String()),
});

export const WadmStatusSchema = Type.Object({
  status: StatusInfoSchema,
  scalers: Type.Optional(
    Type.Array(
      Type.Object({
        id: Type.Optional(Type.String()),
        kind: Type.Optional(Type.String()),
        name: Type.Optional(Type.String()),
        status: StatusInfoSchema,
      }),
    ),
  ),
});
export type WadmStatus = Static<typeof WadmStatusSchema>;

export const ReplySchema = Type.Object({ result: Type.String(), message: Type.Optional(Type.String()) });

/** `model.put`'s reply: `total_versions` counts the versions the model holds after the put (wadm 0.21). */
export const PutReplySchema = Type.Object({
  result: Type.String(),
  message: Type.Optional(Type.String()),
  total_versions: Type.Optional(Type.Integer({ minimum: 1 })),
});

export const VersionsReplySchema = Type.Object({
  result: Type.String(),
  message: Type.Optional(Type.String()),
  versions: Type.Optional(Type.Array(Type.Object({ version: Type.String(), deployed: Type.Boolean() }))),
});

export const GetReplySchema = Type.Object({
  result: Type.String(),
  message: Type.Optional(Type.String()),
  manifest: Type.Optional(
    Type.Object({
      metadata: Type.Object({
        name: Type.String(),
        annotations: Type.Optional(Type.Record(Type.String(), Type.String())),
      }),
    }),
  ),
});

/** `model.get` without a name: the lattice's models (wadm 0.21's list; `model.list` is deprecated). */
export const ListReplySchema = Type.Object({
  result: Type.String(),
  message: Type.Optional(Type.String()),
  models: Type.Optional(
    Type.Array(
      Type.Object({
        name: Type.String(),
        version: Type.Optional(Type.String()),
        deployed_version: Type.Optional(Type.Union([Type.String(), Type.Null()])),
        /** Checked model by model (WadmStatusSchema): one status we cannot read must not cost the whole list. */
        detailed_status: Type.Optional(Type.Unknown()),
      }),
    ),
  ),
});

export const StatusReplySchema = Type.Object({
  result: Type.String(),
  message: Type.Optional(Type.String()),
  status: Type.Optional(WadmStatusSchema),
});

/** A host's event as wadm decodes it (a CloudEvent whose `source` is the host id); only what we read. */
export const HostEventSchema = Type.Object({
  source: Type.String({ minLength: 1 }),
  time: Type.Optional(Type.String()),
  data: Type.Optional(Type.Unknown()),
});
export type HostEventEnvelope = Static<typeof HostEventSchema>;

const RunningSchema = Type.Array(Type.Object({ annotations: Type.Optional(Type.Record(Type.String(), Type.String())) }));

/** `host_heartbeat`'s data, the HostInventory (wadm requires these fields too). */
export const HeartbeatSchema = Type.Object({
  friendly_name: Type.String(),
  labels: Type.Record(Type.String(), Type.String()),
  version: Type.String(),
  uptime_seconds: Type.Integer({ minimum: 0 }),
  components: RunningSchema,
  providers: RunningSchema,
});

/** `host_started`'s data. */
export const HostStartedSchema = Type.Object({
  friendly_name: Type.String(),
  labels: Type.Record(Type.String(), Type.String()),
  version: Type.Optional(Type.String()),
  uptime_seconds: Type.Optional(Type.Integer({ minimum: 0 })),
});
