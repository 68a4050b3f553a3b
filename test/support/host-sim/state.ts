// What the simulated hosts "run". Links and named config are lattice-wide (real hosts share them
// through the LATTICEDATA/CONFIGDATA KV buckets); components and providers belong to one host.
import type { CtlRequest, Link, PublishedEvent, StringMap } from './types.js';

export interface ComponentInstance {
  imageRef: string;
  /** The annotations of the first scale command: a real host keeps them for later scales. */
  annotations: StringMap;
  maxInstances: number;
}

export interface ProviderInstance {
  imageRef: string;
  annotations: StringMap;
}

export class HostState {
  readonly components = new Map<string, ComponentInstance>();
  readonly providers = new Map<string, ProviderInstance>();
  readonly startedAt = Date.now();

  constructor(
    readonly id: string,
    readonly friendlyName: string,
    public labels: StringMap,
  ) {}
}

/** Images to fail, with the error text the failure event carries. */
export class Faults {
  readonly scales = new Map<string, string>();
  readonly starts = new Map<string, string>();
}

export class LatticeState {
  readonly hosts = new Map<string, HostState>();
  readonly config = new Map<string, StringMap>();
  readonly requests: CtlRequest[] = [];
  readonly events: PublishedEvent[] = [];
  readonly faults = new Faults();
  private readonly linkMap = new Map<string, Link>();

  constructor(readonly lattice: string) {}

  links(): Link[] {
    return [...this.linkMap.values()];
  }

  /** Stores a link the way a real host does (`handle_link_put`); returns an error message on refusal. */
  putLink(link: Link): string | undefined {
    const missing = [...link.source_config, ...link.target_config].find((name) => !this.config.has(name));
    if (missing !== undefined) return `failed to validate link config: configuration ${missing} does not exist`;
    const key = linkKey(link);
    const existing = this.linkMap.get(key);
    if (existing && existing.target !== link.target && existing.interfaces.some((i) => link.interfaces.includes(i))) {
      return 'link already exists with different target, consider deleting the existing link or using a different link name';
    }
    this.linkMap.set(key, link);
    return undefined;
  }

  deleteLink(id: Pick<Link, 'source_id' | 'name' | 'wit_namespace' | 'wit_package'>): Link | undefined {
    const key = linkKey(id);
    const existing = this.linkMap.get(key);
    this.linkMap.delete(key);
    return existing;
  }
}

/** A link is identified by its source, WIT namespace and package, and name (not by its target). */
function linkKey(link: Pick<Link, 'source_id' | 'name' | 'wit_namespace' | 'wit_package'>): string {
  return JSON.stringify([link.source_id, link.wit_namespace, link.wit_package, link.name]);
}
