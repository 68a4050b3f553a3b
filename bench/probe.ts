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
  afterGc: MemoryUsage & { v8Malloced: number; resident?: { mallocBrk: number; anonymous: number; files: number }; spaces?: Record<string, { committed: number; used: number }> };
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
