// The simulator's shapes. Wire types keep wasmCloud's snake_case names, because they are what
// wadm sends and reads (wasmcloud-control-interface 2.4.0); views for assertions are camelCase.

export type StringMap = Record<string, string>;

export interface HostSpec {
  /** Added to the `hostcore.*` labels every real host has. Spread requirements match these. */
  labels?: StringMap;
  friendlyName?: string;
}

export interface HostInfo {
  /** An nkeys server public key ("N…", 56 characters), as a real host uses. */
  id: string;
  friendlyName: string;
  labels: StringMap;
}

/** A link as the control interface carries it (`link.put` body, `link.get` entries, `linkdef_set` data). */
export interface Link {
  source_id: string;
  target: string;
  name: string;
  wit_namespace: string;
  wit_package: string;
  interfaces: string[];
  source_config: string[];
  target_config: string[];
}

export interface RunningComponent {
  hostId: string;
  id: string;
  imageRef: string;
  annotations: StringMap;
  maxInstances: number;
}

export interface RunningProvider {
  hostId: string;
  id: string;
  imageRef: string;
  annotations: StringMap;
}

/** One control-interface request as received, for assertions and for learning what wadm sends. */
export interface CtlRequest {
  /** `component.scale.N…`, `link.get`, `config.put.name`: the subject after `wasmbus.ctl.v1.{lattice}.` */
  operation: string;
  /** The subscribing host that answered (lattice-wide requests are answered by one host of the queue group). */
  hostId: string;
  /** The decoded JSON body; undefined when empty. */
  body: unknown;
  at: Date;
}

export interface PublishedEvent {
  /** The short name: `component_scaled`, `host_heartbeat`, … */
  type: string;
  source: string;
  data: Record<string, unknown>;
  at: Date;
}
