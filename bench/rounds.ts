// Interleaved rounds: every round measures the ceiling and ours back to back (in an order that
// rotates from round to round), so that the machine's drift, which on a shared 2-core VM moves
// throughput by 15-20 points from minute to minute, hits both sides of each ratio alike.
import { loadavg } from 'node:os';
import autocannon from 'autocannon';
import { cpuMicros } from './probe.js';

/**
 * One load run. cpuMicrosPerRequest: the server's CPU time (every thread: user and system, from
 * /proc) over the requests it answered. Unlike req/s it does not count the time another process
 * held the CPU; it still rises with the hypervisor's steal (cold caches after each), which
 * `cpus` (bench/probe.ts: watchCpus) reports beside it.
 */
export interface Load {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  cpuMicrosPerRequest?: number;
}

export interface Spread {
  median: number;
  min: number;
  max: number;
}

/** One round: each contender's result by name, and the machine's 1-minute load average after it. */
export interface Round<T> {
  results: Record<string, T>;
  loadAverage: number;
}

/** Runs every contender once per round, rotating who goes first. */
export async function interleave<T>(rounds: number, contenders: Record<string, () => Promise<T>>): Promise<Round<T>[]> {
  const names = Object.keys(contenders);
  const done: Round<T>[] = [];
  for (let round = 0; round < rounds; round++) {
    const results: Record<string, T> = {};
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + round) % names.length]!;
      results[name] = await contenders[name]!();
    }
    done.push({ results: Object.fromEntries(names.map((n) => [n, results[n]!])), loadAverage: round2(loadavg()[0]!) });
  }
  return done;
}

/** The median (upper one of an even count) and the range. */
export function spread(values: number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  return { median: round2(sorted[Math.floor(sorted.length / 2)]!), min: round2(sorted[0]!), max: round2(sorted.at(-1)!) };
}

/** The per-round ratio of a measure of `ours` to the same measure of `base`. */
export function ratios<T>(rounds: Round<T>[], ours: string, base: string, measure: (t: T) => number): Spread {
  return spread(rounds.map((r) => measure(r.results[ours]!) / measure(r.results[base]!)));
}

export const formatSpread = (s: Spread, unit = ''): string => `${s.median}${unit} (${s.min}-${s.max}${unit})`;

export async function load(
  url: string,
  body: string,
  options: { connections: number; seconds: number; headers?: Record<string, string>; pid?: number },
): Promise<Load> {
  const cpuBefore = options.pid === undefined ? undefined : cpuMicros(options.pid);
  const result = await autocannon({
    url: `${url}/sync`,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    body,
    connections: options.connections,
    duration: options.seconds,
  });
  const cpuAfter = options.pid === undefined ? undefined : cpuMicros(options.pid);
  const cpu =
    cpuBefore === undefined || cpuAfter === undefined || result.requests.total === 0
      ? {}
      : { cpuMicrosPerRequest: round2((cpuAfter - cpuBefore) / result.requests.total) };
  // autocannon counts a 304 as non-2xx: only 5xx and transport errors are failures here.
  return {
    rps: round2(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result['5xx'],
    ...cpu,
  };
}

export function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
