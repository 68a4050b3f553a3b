// A host's self-description: the heartbeat / `host.get` inventory and the `host.ping` summary
// (lattice-host-protocol.md §3.1; wasmcloud-control-interface 2.4.0 `HostInventory`, `Host`).
import type { HostState } from './state.js';

/** Must parse as semver, or wadm drops every heartbeat without a warning. */
export const HOST_VERSION = '1.9.2';

/** Real hosts always carry these; configured labels are added to them. */
export const BUILTIN_LABELS = { 'hostcore.arch': 'x86_64', 'hostcore.os': 'linux', 'hostcore.osfamily': 'unix' };

export function uptimeSeconds(host: HostState, now = Date.now()): number {
  return Math.max(0, Math.floor((now - host.startedAt) / 1000));
}

/** Like the host's `humantime` rendering, e.g. "1m 5s". */
export function uptimeHuman(seconds: number): string {
  const parts: [number, string][] = [[Math.floor(seconds / 86_400), 'd'], [Math.floor(seconds / 3600) % 24, 'h'], [Math.floor(seconds / 60) % 60, 'm'], [seconds % 60, 's']];
  const shown = parts.filter(([n]) => n > 0).map(([n, unit]) => `${n}${unit}`);
  return shown.length > 0 ? shown.join(' ') : '0s';
}

/** The `host_heartbeat` data. wadm rebuilds its view of the host from this on every heartbeat. */
export function inventory(host: HostState): Record<string, unknown> {
  const uptime = uptimeSeconds(host);
  return {
    components: [...host.components].map(([id, c]) => ({
      id, image_ref: c.imageRef, annotations: c.annotations, revision: 0, max_instances: c.maxInstances,
    })),
    providers: [...host.providers].map(([id, p]) => ({ id, image_ref: p.imageRef, annotations: p.annotations, revision: 0 })),
    host_id: host.id,
    friendly_name: host.friendlyName,
    labels: host.labels,
    version: HOST_VERSION,
    uptime_human: uptimeHuman(uptime),
    uptime_seconds: uptime,
  };
}

/** The `host.ping` answer (`Host`). */
export function summary(host: HostState, lattice: string): Record<string, unknown> {
  const uptime = uptimeSeconds(host);
  return {
    id: host.id, friendly_name: host.friendlyName, labels: host.labels, lattice,
    version: HOST_VERSION, uptime_human: uptimeHuman(uptime), uptime_seconds: uptime,
  };
}
