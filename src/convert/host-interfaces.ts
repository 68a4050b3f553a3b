// The host plugins of wasmCloud v2 that stand in for v1's well-known providers, and the list of
// hostInterfaces a workload declares. Since runtime-operator 2.5 two CEL rules allow at most one
// unnamed entry per namespace:package, so every addition to a package merges into its one entry
// (incoming and outgoing wasi:http become one entry with both interfaces).
import type { HostInterface } from '../schema/v2.js';

/** namespace:package served by a plugin every v2 host has, and what the v1 provider was. */
const HOST_PLUGINS: Record<string, string> = {
  'wasi:http': 'HTTP',
  'wasi:keyvalue': 'keyvalue (NATS-backed)',
  'wasi:blobstore': 'blobstore (NATS-backed)',
  'wasmcloud:messaging': 'messaging (NATS)',
};

/** What a plugin does differently from the v1 provider, said where its link is reported. */
const PLUGIN_NOTES: Record<string, string> = {
  'wasi:keyvalue':
    'v2 uses the bucket the component opens by name (wasi:keyvalue/store open), an existing JetStream KV bucket; no link setting picks it',
};

export function hostPluginOf(namespace: string, pkg: string): string | undefined {
  return HOST_PLUGINS[`${namespace}:${pkg}`];
}

export function pluginNoteOf(pkg: string): string | undefined {
  return PLUGIN_NOTES[pkg];
}

export class HostInterfaceList {
  private readonly entries: HostInterface[] = [];

  /** Adds the interfaces (and config, config maps, secrets) to the package's entry; true when one existed. */
  ensure(entry: HostInterface): boolean {
    const existing = this.entries.find((e) => e.namespace === entry.namespace && e.package === entry.package);
    if (existing === undefined) {
      this.entries.push({ ...entry, interfaces: [...entry.interfaces] });
      return false;
    }
    for (const iface of entry.interfaces) if (!existing.interfaces.includes(iface)) existing.interfaces.push(iface);
    if (entry.config !== undefined) existing.config = { ...existing.config, ...entry.config };
    if (entry.configFrom !== undefined) existing.configFrom = union(existing.configFrom, entry.configFrom);
    if (entry.secretFrom !== undefined) existing.secretFrom = union(existing.secretFrom, entry.secretFrom);
    return true;
  }

  has(namespace: string, pkg: string, iface: string): boolean {
    return this.entries.some((e) => e.namespace === namespace && e.package === pkg && e.interfaces.includes(iface));
  }

  /** A copy in the order the packages were first seen: equal input, equal output. */
  list(): HostInterface[] {
    return this.entries.map((e) => structuredClone(e));
  }
}

function union(a: { name: string }[] | undefined, b: { name: string }[]): { name: string }[] {
  const names = [...(a ?? []), ...b].map((ref) => ref.name);
  return [...new Set(names)].map((name) => ({ name }));
}
