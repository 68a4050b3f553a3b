// NATS subjects of wadm's API and status stream. Names and lattices are checked to be single
// tokens before they get here; this checks again, because a `*`, `>` or `.` in a subject would
// address other applications than the one the resource names.
import { isSubjectToken } from '../schema/kit.js';

export type ModelOperation = 'put' | 'get' | 'versions' | 'del' | 'deploy' | 'undeploy' | 'status' | 'history';

export function apiSubject(prefix: string, lattice: string, operation: ModelOperation, name?: string): string {
  assertToken(lattice, 'lattice');
  const base = `${prefix}.${lattice}.model.${operation}`;
  if (name === undefined) return base;
  assertToken(name, 'application name');
  return `${base}.${name}`;
}

/** Status of every application of a lattice: `wadm.status.{lattice}.{name}`. */
export function statusSubject(lattice: string): string {
  assertToken(lattice, 'lattice');
  return `wadm.status.${lattice}.*`;
}

/** wadm's own events of a lattice: `wadm.evt.{lattice}.manifest_published` and the like. */
export function eventSubject(lattice: string): string {
  assertToken(lattice, 'lattice');
  return `wadm.evt.${lattice}.>`;
}

/** The events of a lattice's hosts the service listens to: what hosts exist, with which labels, running what. */
export const HOST_EVENTS = ['host_heartbeat', 'host_started', 'host_stopped'] as const;
export type HostEvent = (typeof HOST_EVENTS)[number];

/** `wasmbus.evt.{lattice}.host_heartbeat` and the like: a host's own events, as wadm hears them. */
export function hostEventSubject(lattice: string, event: HostEvent): string {
  assertToken(lattice, 'lattice');
  return `wasmbus.evt.${lattice}.${event}`;
}

/** What the service's NATS user needs to use a lattice (SECURITY.md): said when NATS refuses a subject. */
export function grantFor(apiPrefix: string, lattice: string): string {
  return `publish on "${apiPrefix}.${lattice}.>" and subscribe on "${statusSubject(lattice)}" and "${eventSubject(lattice)}"`;
}

function assertToken(value: string, what: string): void {
  if (!isSubjectToken(value)) throw new Error(`refusing to build a NATS subject from ${what} ${JSON.stringify(value)}`);
}
