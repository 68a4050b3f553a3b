// The measured servers run under the memory limit the Deployment gives the pod, as a kubelet
// would run them: Node sizes V8's heap from the cgroup's limit (`uv_get_constrained_memory`), so
// a server on a 24 GiB machine without one keeps a young generation and grows an old one that no
// pod of ours ever has. Each server gets a memory cgroup of its own below the bench's, where the
// machine lets us create one (cgroup v1's memory controller, or v2 with it delegated).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import yaml from 'js-yaml';

const ROOT = resolve(import.meta.dirname, '..');

export interface MemoryLimit {
  /** The limit in bytes and the cgroup the servers' cgroups go below, when servers run under it. */
  under?: { bytes: number; placement: Placement };
  /** Where the limit comes from, or why servers run without one. */
  note: string;
}

export interface Placement {
  /** The memory cgroup the bench runs in, whose children the servers get. */
  parent: string;
  /** The file that takes a limit: `memory.limit_in_bytes` (v1) or `memory.max` (v2). */
  limitFile: string;
}

let serial = 0;

/**
 * BENCH_MEMORY_LIMIT: a Kubernetes quantity (`512Mi`), `none`, or unset for the Deployment's own
 * `resources.limits.memory`. Checked once, by creating (and removing) a cgroup under that limit.
 */
export function memoryLimit(setting = process.env['BENCH_MEMORY_LIMIT']): MemoryLimit {
  if (setting === 'none') return { note: 'none (BENCH_MEMORY_LIMIT=none)' };
  const [quantity, source] = setting ? [setting, 'BENCH_MEMORY_LIMIT'] : [deploymentMemoryLimit(), "the Deployment's limits.memory"];
  const bytes = bytesOf(quantity);
  try {
    const placement = findPlacement();
    removeLeftovers(placement.parent);
    rmdirSync(createCgroup(placement, bytes));
    return { under: { bytes, placement }, note: `${quantity} (${source}), each measured server in a memory cgroup of its own` };
  } catch (error) {
    return { note: `none: this machine does not let the bench create a memory cgroup (${(error as Error).message})` };
  }
}

/**
 * The command that runs `command args` inside a new cgroup under the limit, and the cgroup to
 * remove once it exited; the command itself when there is no limit. The shell puts itself in
 * the cgroup and then execs, so the pid the bench reads CPU time from is the server's.
 */
export function underLimit(limit: MemoryLimit, command: string, args: string[]): { command: string; args: string[]; release(): void } {
  if (!limit.under) return { command, args, release: () => undefined };
  const cgroup = createCgroup(limit.under.placement, limit.under.bytes);
  return {
    command: 'sh',
    args: ['-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroup, command, ...args],
    release: () => rmdirSync(cgroup),
  };
}

/** The cgroups of a bench that was killed before its servers exited (empty by now: rmdir takes only those). */
function removeLeftovers(parent: string): void {
  for (const name of readdirSync(parent)) {
    const pid = /^wcm-bench-(\d+)-\d+$/.exec(name)?.[1];
    if (pid === undefined || pid === String(process.pid) || existsSync(`/proc/${pid}`)) continue;
    try {
      rmdirSync(`${parent}/${name}`);
    } catch {
      // Still holds a process (a server the killed bench left running): left alone.
    }
  }
}

function createCgroup({ parent, limitFile }: Placement, bytes: number): string {
  const cgroup = `${parent}/wcm-bench-${process.pid}-${serial++}`;
  mkdirSync(cgroup);
  try {
    writeFileSync(`${cgroup}/${limitFile}`, String(bytes));
  } catch (error) {
    rmdirSync(cgroup);
    throw error;
  }
  return cgroup;
}

/** This process's memory cgroup: v1's `N:memory:/path` line of /proc/self/cgroup, else v2's `0::/path`. */
function findPlacement(): Placement {
  return placementFrom(readFileSync('/proc/self/cgroup', 'utf8'));
}

export function placementFrom(procSelfCgroup: string): Placement {
  const lines = procSelfCgroup.split('\n');
  const v1 = lines.find((line) => line.split(':')[1]?.split(',').includes('memory'));
  if (v1)
    return { parent: `/sys/fs/cgroup/memory${v1.slice(v1.indexOf(':/') + 1)}`.replace(/\/$/, ''), limitFile: 'memory.limit_in_bytes' };
  const v2 = lines.find((line) => line.startsWith('0::'));
  if (v2) return { parent: `/sys/fs/cgroup${v2.slice(3)}`.replace(/\/$/, ''), limitFile: 'memory.max' };
  throw new Error('no memory cgroup in /proc/self/cgroup');
}

interface DeploymentShape {
  kind?: string;
  spec?: { template?: { spec?: { containers?: Array<{ resources?: { limits?: { memory?: unknown } } }> } } };
}

export function deploymentMemoryLimit(): string {
  const documents = yaml.loadAll(readFileSync(resolve(ROOT, 'manifests/deployment.yaml'), 'utf8')) as DeploymentShape[];
  const deployment = documents.find((d) => d?.kind === 'Deployment');
  const limit = deployment?.spec?.template?.spec?.containers?.[0]?.resources?.limits?.memory;
  if (typeof limit !== 'string') throw new Error('manifests/deployment.yaml has no resources.limits.memory');
  return limit;
}

const UNITS: Record<string, number> = { '': 1, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, k: 1e3, M: 1e6, G: 1e9 };

/** A Kubernetes memory quantity (`512Mi`, `1G`, `268435456`) in bytes. */
export function bytesOf(quantity: string): number {
  const match = /^(\d+)(Ki|Mi|Gi|k|M|G)?$/.exec(quantity.trim());
  if (!match) throw new Error(`BENCH_MEMORY_LIMIT: ${quantity} is not a memory quantity such as 512Mi`);
  return Number(match[1]) * UNITS[match[2] ?? '']!;
}
