// What the handlers share: the incoming request, their outcome, and wadm's small request bodies
// (`{"version": ...}` for get/del/deploy, an ignored object for undeploy).
import type { StatusBoard } from './status-board.js';
import type { ManifestStore } from './store.js';

export interface Incoming {
  lattice: string;
  name: string | undefined;
  body: Uint8Array;
  contentType: string | undefined;
}

export interface Deps {
  store: ManifestStore;
  board: StatusBoard;
}

/** A reply object (serialized as is, so key order is serde's) and what wadm does after replying. */
export interface Outcome {
  reply: object | undefined;
  after?: () => void;
}

export function reply(body: object, after?: () => void): Outcome {
  return after ? { reply: body, after } : { reply: body };
}

/** `handlers.rs::send_error`: every error built this way has exactly these two keys. */
export function error(message: string): Outcome {
  return { reply: { result: 'error', message } };
}

export type VersionRequest = { version: string | null } | { error: Outcome };

/** `GetModelRequest` / `DeleteModelRequest` / `DeployModelRequest`: an empty body means no version. */
export function versionRequest(body: Uint8Array, what: 'get' | 'delete' | 'deploy'): VersionRequest {
  if (body.length === 0) return { version: null };
  const parsed = parseJson(body);
  if ('error' in parsed) return { error: badRequest(what, parsed.error) };
  const problem = versionProblem(parsed.value, structName(what));
  if (problem !== undefined) return { error: badRequest(what, problem) };
  const version = (parsed.value as Record<string, unknown>)['version'];
  return { version: typeof version === 'string' ? version : null };
}

/** `UndeployModelRequest {}`: any JSON object is fine, its fields are ignored. */
export function undeployRequest(body: Uint8Array): Outcome | undefined {
  if (body.length === 0) return undefined;
  const parsed = parseJson(body);
  if ('error' in parsed) return badRequest('undeploy', parsed.error);
  const v = parsed.value;
  if (typeof v === 'object' && v !== null) return undefined;
  return badRequest('undeploy', `invalid type: ${jsonKind(v)}, expected struct UndeployModelRequest`);
}

function badRequest(what: string, problem: string): Outcome {
  // Rust prints the serde_json error with `{:?}`: Error("...", line: L, column: C).
  return error(`Unable to parse ${what} application request: Error(${JSON.stringify(problem)})`);
}

function structName(what: 'get' | 'delete' | 'deploy'): string {
  return { get: 'GetModelRequest', delete: 'DeleteModelRequest', deploy: 'DeployModelRequest' }[what];
}

function versionProblem(v: unknown, struct: string): string | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return `invalid type: ${jsonKind(v)}, expected struct ${struct}`;
  const version = (v as Record<string, unknown>)['version'];
  if (version === undefined || version === null || typeof version === 'string') return undefined;
  return `invalid type: ${jsonKind(version)}, expected a string`;
}

function parseJson(body: Uint8Array): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(new TextDecoder().decode(body)) };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

function jsonKind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'sequence';
  if (typeof v === 'string') return `string ${JSON.stringify(v)}`;
  if (typeof v === 'number') return Number.isInteger(v) ? `integer \`${v}\`` : `floating point \`${v}\``;
  if (typeof v === 'boolean') return `boolean \`${v}\``;
  return 'map';
}
