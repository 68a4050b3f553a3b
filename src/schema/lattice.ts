// The WasmCloudLattice resource: a lattice as the platform team sees it in Kubernetes. Its spec
// says what "ready" means for the lattice (all optional: an empty spec works); its status is what
// the service knows of the lattice: hosts from their heartbeats, applications from wadm's list,
// the namespaces the lattice policy lets in. Every description here becomes `kubectl explain` text.
import { Type, type Static } from '@sinclair/typebox';
import { CLOSED as closed, StringEnum, StringMap, SUBJECT_TOKEN } from './kit.js';
import { ConditionsSchema, SCALER_STATES } from './status.js';

/**
 * How much of a lattice its status shows: a status is one etcd value (at most 1.5 MiB), and a
 * lattice may have thousands of hosts and applications. Counts are always whole; lists are the
 * first entries in a fixed order, and say how many they leave out.
 */
export const LATTICE_LIMITS = {
  hostsShown: 50,
  applicationsShown: 50,
  labelsPerHost: 32,
  labelKeys: 64,
  valuesPerLabel: 16,
  namespaces: 64,
  requiredHosts: 16,
  /** Characters of a label key or value, a name or a message kept (longer ones are cut, marked with "…"). */
  text: 256,
} as const;

/** Ready needs this many hosts when spec.minHosts is not set: a lattice without hosts runs nothing. */
export const DEFAULT_MIN_HOSTS = 1;

const RequiredHostsSchema = Type.Object(
  {
    labels: StringMap({
      minProperties: 1,
      description: 'Labels a host must have, every one of them with this value (as a spread requirement matches hosts).',
    }),
    count: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: 'How many such hosts Ready needs. Default 1.' })),
  },
  { ...closed, description: 'Hosts with given labels that Ready needs.' },
);

export const LatticeSpecSchema = Type.Object(
  {
    lattice: Type.Optional(
      Type.String({
        pattern: SUBJECT_TOKEN,
        maxLength: 253,
        description:
          'The lattice id (the hosts\' lattice, one NATS subject token: letters, digits, "-" and "_"). Default: metadata.name. Set it for a lattice whose id is not a Kubernetes name (capitals, "_").',
      }),
    ),
    minHosts: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 10_000,
        description: `Ready needs at least this many hosts heartbeating. Default ${DEFAULT_MIN_HOSTS}; 0: Ready needs only wadm to answer.`,
      }),
    ),
    requiredHosts: Type.Optional(
      Type.Array(RequiredHostsSchema, {
        maxItems: LATTICE_LIMITS.requiredHosts,
        description: 'Hosts with given labels that Ready needs, each entry on its own (a host may count for several).',
      }),
    ),
  },
  { ...closed, description: 'Which lattice this is, and what Ready means for it. Every field is optional.' },
);
export type LatticeSpec = Static<typeof LatticeSpecSchema>;

export const LatticeHostSchema = Type.Object(
  {
    id: Type.String({ description: "The host's id (its nkey, N…), the `source` of its heartbeats." }),
    friendlyName: Type.String({ description: 'The name the host gave itself.' }),
    labels: StringMap({ description: "The host's labels as its last heartbeat gave them: what spread requirements match." }),
    labelsOmitted: Type.Optional(
      Type.Integer({ description: `Labels left out of labels (a host shows at most ${LATTICE_LIMITS.labelsPerHost}).` }),
    ),
    version: Type.String({ description: 'The wasmCloud version the host runs.' }),
    uptimeSeconds: Type.Integer({ description: 'How long the host had been running at its last heartbeat.' }),
    lastHeartbeat: Type.String({ format: 'date-time', description: 'When the service last heard a heartbeat of the host.' }),
    components: Type.Integer({ description: 'Components the host runs, as its last heartbeat listed them.' }),
    providers: Type.Integer({ description: 'Capability providers the host runs, as its last heartbeat listed them.' }),
  },
  { description: 'One host heartbeating in the lattice.' },
);
export type LatticeHost = Static<typeof LatticeHostSchema>;

export const HostLabelSchema = Type.Object(
  {
    key: Type.String({ description: 'A label key some host has.' }),
    values: Type.Array(Type.String(), {
      description: `Its values across the hosts, sorted (at most ${LATTICE_LIMITS.valuesPerLabel}).`,
    }),
    hosts: Type.Integer({ description: 'How many hosts have this key, whatever its value.' }),
  },
  { description: 'A label key of the lattice, with the values its hosts give it.' },
);
export type HostLabel = Static<typeof HostLabelSchema>;

/** Where a lattice's applications were learnt. */
export const APPLICATION_SOURCES = ['Wadm', 'Heartbeats'] as const;
export type ApplicationSource = (typeof APPLICATION_SOURCES)[number];

export const LatticeApplicationSchema = Type.Object(
  {
    name: Type.String({ description: "The application's name in wadm." }),
    version: Type.Optional(Type.String({ description: 'The newest version wadm holds.' })),
    deployedVersion: Type.Optional(Type.String({ description: 'The version wadm has deployed; absent when none is.' })),
    status: Type.Optional(StringEnum(SCALER_STATES, { description: "wadm's status of the application." })),
    message: Type.Optional(Type.String({ description: "wadm's status message, when it is not Deployed." })),
    owner: Type.Optional(
      Type.String({
        description:
          'The WasmCloudApplication (`namespace/name`) that the core.wasmcloud.com/owner annotation of the deployed version (else the newest) names.',
      }),
    ),
    unowned: Type.Optional(
      Type.Boolean({ description: 'true: that version carries no owner annotation (put with `wash app` or another client of wadm).' }),
    ),
    hosts: Type.Optional(Type.Integer({ description: 'Hosts whose last heartbeat lists a component or provider of the application.' })),
  },
  { description: 'One application of the lattice.' },
);
export type LatticeApplication = Static<typeof LatticeApplicationSchema>;

export const WasmCloudLatticeStatusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(Type.Integer({ description: 'metadata.generation of the spec this status describes.' })),
    lattice: Type.Optional(Type.String({ description: 'The lattice id this status describes.' })),
    message: Type.Optional(Type.String({ description: "Summary message, the same as the Ready condition's." })),
    wadmReachable: Type.Optional(
      Type.Boolean({ description: "Whether the lattice's wadm answered the service within the last check period (a minute)." }),
    ),
    hostCount: Type.Optional(Type.Integer({ description: 'Hosts heartbeating in the lattice.' })),
    hosts: Type.Optional(
      Type.Array(LatticeHostSchema, {
        maxItems: LATTICE_LIMITS.hostsShown,
        description: `The hosts, by friendly name then id (at most ${LATTICE_LIMITS.hostsShown}).`,
      }),
    ),
    hostsOmitted: Type.Optional(Type.Integer({ description: 'Hosts counted in hostCount but left out of hosts.' })),
    hostLabels: Type.Optional(
      Type.Array(HostLabelSchema, {
        maxItems: LATTICE_LIMITS.labelKeys,
        description: `Every label key of the hosts with its values: what a spread requirement can match (at most ${LATTICE_LIMITS.labelKeys} keys).`,
      }),
    ),
    applicationCount: Type.Optional(Type.Integer({ description: 'Applications in the lattice.' })),
    applications: Type.Optional(
      Type.Array(LatticeApplicationSchema, {
        maxItems: LATTICE_LIMITS.applicationsShown,
        description: `The applications, by name (at most ${LATTICE_LIMITS.applicationsShown}).`,
      }),
    ),
    applicationsOmitted: Type.Optional(
      Type.Integer({ description: 'Applications counted in applicationCount but left out of applications.' }),
    ),
    applicationsFrom: Type.Optional(
      StringEnum(APPLICATION_SOURCES, {
        description:
          "Wadm: wadm's list of the lattice's applications. Heartbeats: that list is too large for one NATS message (or wadm cannot send it), so the applications are those the hosts' heartbeats say they run, without versions, status or owners.",
      }),
    ),
    namespaces: Type.Optional(
      Type.Array(Type.String(), {
        maxItems: LATTICE_LIMITS.namespaces,
        description:
          'The namespaces whose WasmCloudApplications the lattice policy lets use this lattice, as the policy names them (`*` globs: `team-*`, `*` for all).',
      }),
    ),
    conditions: Type.Optional(ConditionsSchema),
  },
  { description: 'The lattice as the service knows it, written by the controller.' },
);
export type WasmCloudLatticeStatus = Static<typeof WasmCloudLatticeStatusSchema>;
