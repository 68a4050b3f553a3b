// `hosts`: the hosts of a lattice as their heartbeats tell them, the way the service hears them
// for a WasmCloudLattice: it listens to the lattice's host events for a while (a host heartbeats
// every 30 s) and prints what it heard. It asks no host and no wadm anything.
import type { Config } from '../plumbing/config.js';
import { createLogger } from '../plumbing/logger.js';
import { aliveHosts, DEFAULT_HEARTBEAT_MS, pairs, type HostFacts } from '../core/lattice-hosts.js';
import { byCodeUnits } from '../core/order.js';
import { HostRegistry } from '../lattice/hosts.js';
import type { Outcome } from './commands.js';
import { withNats } from './wadm-session.js';

export function hosts(lattice: string, listenSeconds: number, config: Config): Promise<Outcome> {
  return withNats(config, async (nc) => {
    const registry = new HostRegistry(() => nc, createLogger('silent'), {
      now: Date.now,
      defaultPeriodMs: DEFAULT_HEARTBEAT_MS,
      idleMs: Infinity,
      retryFailedMs: Infinity,
      maxHostsPerLattice: 10_000,
      maxLattices: 1,
    });
    registry.view(lattice);
    await nc.flush();
    await new Promise((resolve) => setTimeout(resolve, listenSeconds * 1000));
    const view = registry.view(lattice);
    if (!view.watching) return { stdout: '', stderr: `cannot hear the hosts of lattice "${lattice}": ${view.message}\n`, code: 2 };
    const heard = aliveHosts(view, Date.now()).sort((a, b) => byCodeUnits(a.friendlyName, b.friendlyName) || byCodeUnits(a.id, b.id));
    if (heard.length === 0) return { stdout: '', stderr: `no host of lattice "${lattice}" heartbeat within ${listenSeconds} s\n`, code: 1 };
    return { stdout: table(heard), stderr: '', code: 0 };
  });
}

function table(heard: HostFacts[]): string {
  const rows = [['NAME', 'ID', 'VERSION', 'UPTIME', 'COMPONENTS', 'PROVIDERS', 'LABELS']];
  for (const host of heard)
    rows.push([
      host.friendlyName,
      host.id,
      host.version,
      `${host.uptimeSeconds}s`,
      String(host.components),
      String(host.providers),
      pairs(host.labels).replaceAll(', ', ','),
    ]);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('   ')).join('\n') + '\n';
}
