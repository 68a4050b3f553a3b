// Label matching: an auction constraint (like a spread requirement in wadm) holds when every
// key is present with exactly that value.
import type { StringMap } from './types.js';

export function satisfies(labels: StringMap, constraints: StringMap): boolean {
  return Object.entries(constraints).every(([key, value]) => labels[key] === value);
}
