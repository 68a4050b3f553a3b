// Reading request bodies. wadm sends well-formed JSON, but a simulator that trusts it blindly
// turns a protocol mistake into a confusing crash; these accessors turn it into a failed reply.
import type { StringMap } from './types.js';

export class BadRequest extends Error {}

function object(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new BadRequest('request body is not a JSON object');
  return body as Record<string, unknown>;
}

export function text(body: unknown, key: string, fallback?: string): string {
  const value = object(body)[key] ?? fallback;
  if (typeof value !== 'string') throw new BadRequest(`request body has no string "${key}"`);
  return value;
}

export function natural(body: unknown, key: string): number {
  const value = object(body)[key] ?? 0;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw new BadRequest(`"${key}" is not an unsigned integer`);
  return value;
}

export function flag(body: unknown, key: string): boolean {
  return object(body)[key] === true;
}

export function stringList(body: unknown, key: string): string[] {
  const value = object(body)[key] ?? [];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new BadRequest(`"${key}" is not a list of strings`);
  return value as string[];
}

/** A string → string map; the whole body when `key` is omitted (config.put sends a bare map). */
export function stringMap(body: unknown, key?: string): StringMap {
  const value = key === undefined ? body : (object(body)[key] ?? {});
  const map = object(value);
  if (!Object.values(map).every((v) => typeof v === 'string')) throw new BadRequest(`${key ?? 'body'} is not a map of strings`);
  return { ...(map as StringMap) };
}
