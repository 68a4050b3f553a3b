// Reads the memory of a service started with bench/memory-probe.mjs.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export interface MemoryUsage {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

export interface ProbeReading {
  /** As found when read, before the probe's own GC. */
  found: MemoryUsage;
  /** After a forced full GC. */
  afterGc: MemoryUsage & {
    v8Malloced: number;
    resident?: { mallocBrk: number; anonymous: number; files: number };
    spaces?: Record<string, { committed: number; used: number }>;
  };
  snapshot?: string;
}

const PROBE = resolve(import.meta.dirname, 'memory-probe.mjs');

/** A file for the probe to write to, and the node flags that load it. */
export function memoryProbe(): { env: Record<string, string>; nodeArgs: string[]; read(pid: number): Promise<ProbeReading> } {
  const file = join(mkdtempSync(join(tmpdir(), 'bench-probe-')), 'memory.json');
  return {
    env: { BENCH_PROBE_FILE: file },
    nodeArgs: ['--expose-gc', '--import', PROBE],
    async read(pid) {
      rmSync(file, { force: true });
      process.kill(pid, 'SIGUSR2');
      for (let i = 0; !existsSync(file); i++) {
        if (i > 1200) throw new Error('the memory probe did not answer within 60 s');
        await new Promise((r) => setTimeout(r, 50));
      }
      return JSON.parse(readFileSync(file, 'utf8')) as ProbeReading;
    },
  };
}

export const mib = (bytes: number): number => Math.round((bytes / 2 ** 20) * 10) / 10;

/** A process's resident memory now, from /proc without disturbing it (no signal, no GC); undefined off Linux. */
export function residentBytes(pid: number): number | undefined {
  try {
    const kib = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kib === undefined ? undefined : Number(kib) * 1024;
  } catch {
    return undefined;
  }
}

/** Clock ticks per second of /proc/PID/stat's times: USER_HZ, 100 on every Linux this runs on. */
const TICKS_PER_SECOND = 100;

/** CPU time a process has used so far, all threads, user and system, in µs; undefined off Linux. */
export function cpuMicros(pid: number): number | undefined {
  try {
    // Fields after the command name, which is in parentheses and may hold spaces: utime is 14th, stime 15th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND) * 1e6;
  } catch {
    return undefined;
  }
}

/** Shares of one CPU's time over a measurement, in percent: running anything, idle, and taken by the hypervisor for other guests. */
export interface CpuShares {
  busy: number;
  idle: number;
  stolen: number;
}

/** What the pinned CPUs did while a measurement ran; absent where nothing is pinned or off Linux. */
export interface CpusDuring {
  server: CpuShares;
  loadGenerator: CpuShares;
}

/**
 * Runs a measurement and says what the server's and the load generator's CPUs did meanwhile.
 * Neither the load average nor a process's CPU time shows the hypervisor taking a CPU away (steal
 * time) or a server's CPU waiting for its load: a round measured under either is told apart here.
 */
export async function watchCpus<T extends object>(
  pin: { servers?: number; loadGenerator?: number },
  measure: () => Promise<T>,
): Promise<T & { cpus?: CpusDuring }> {
  const before = procStat();
  const result = await measure();
  const after = procStat();
  if (before === undefined || after === undefined || pin.servers === undefined || pin.loadGenerator === undefined) return result;
  const server = cpuSharesBetween(before, after, pin.servers);
  const loadGenerator = cpuSharesBetween(before, after, pin.loadGenerator);
  return server && loadGenerator ? { ...result, cpus: { server, loadGenerator } } : result;
}

function procStat(): string | undefined {
  try {
    return readFileSync('/proc/stat', 'utf8');
  } catch {
    return undefined;
  }
}

/** One CPU's shares between two readings of /proc/stat; undefined if either lacks that CPU. */
export function cpuSharesBetween(before: string, after: string, cpu: number): CpuShares | undefined {
  const [a, b] = [ticksOf(before, cpu), ticksOf(after, cpu)];
  if (!a || !b) return undefined;
  const [busy, idle, stolen] = [b.busy - a.busy, b.idle - a.idle, b.stolen - a.stolen];
  const total = busy + idle + stolen || 1;
  const percent = (n: number) => Math.round((n / total) * 100);
  return { busy: percent(busy), idle: percent(idle), stolen: percent(stolen) };
}

/** A CPU's line of /proc/stat: user nice system idle iowait irq softirq steal (guest time is inside user). */
function ticksOf(stat: string, cpu: number): { busy: number; idle: number; stolen: number } | undefined {
  const line = stat.split('\n').find((l) => l.startsWith(`cpu${cpu} `));
  if (!line) return undefined;
  // Kernels before 2.6.11 have no steal column: a column the line lacks counts as 0.
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return { busy: user + nice + system + irq + softirq, idle: idle + iowait, stolen: steal };
}
