// The `wadm_manifests` KV bucket in memory: per lattice, per app, every version in insertion
// order plus the deployed version (`crates/wadm/src/model/mod.rs::StoredManifest`).
import { randomBytes } from 'node:crypto';
import { VERSION_ANNOTATION, manifestVersion, type Manifest } from './types.js';

export class StoredApp {
  /** A Map keeps insertion order, like wadm's IndexMap; the last entry is the "current" version. */
  readonly manifests = new Map<string, Manifest>();
  deployed: string | null = null;

  constructor(readonly name: string) {}

  get currentVersion(): string {
    return [...this.manifests.keys()].at(-1) ?? '';
  }

  get current(): Manifest {
    const m = [...this.manifests.values()].at(-1);
    if (m === undefined) throw new Error(`app ${this.name} has no versions`);
    return m;
  }

  get deployedManifest(): Manifest | undefined {
    return this.deployed === null ? undefined : this.manifests.get(this.deployed);
  }

  /** `add_version`: a missing version annotation gets a fresh ULID; an existing version is refused. */
  addVersion(manifest: Manifest): boolean {
    if (!manifest.metadata.annotations.has(VERSION_ANNOTATION)) {
      manifest.metadata.annotations.set(VERSION_ANNOTATION, ulid());
    }
    const version = manifestVersion(manifest);
    if (this.manifests.has(version)) return false;
    this.manifests.set(version, manifest);
    return true;
  }

  /** `deploy`: no version or "latest" means the current version. */
  deploy(version: string | null): boolean {
    if (version === null || version === 'latest') {
      this.deployed = this.currentVersion;
      return true;
    }
    if (!this.manifests.has(version)) return false;
    this.deployed = version;
    return true;
  }
}

export class ManifestStore {
  private readonly lattices = new Map<string, Map<string, StoredApp>>();

  get(lattice: string, name: string): StoredApp | undefined {
    return this.lattices.get(lattice)?.get(name);
  }

  /** A fresh app that only becomes visible once `save`d, like a KV put after the checks pass. */
  getOrNew(lattice: string, name: string): StoredApp {
    return this.get(lattice, name) ?? new StoredApp(name);
  }

  save(lattice: string, app: StoredApp): void {
    let apps = this.lattices.get(lattice);
    if (apps === undefined) this.lattices.set(lattice, (apps = new Map()));
    apps.set(app.name, app);
  }

  delete(lattice: string, name: string): void {
    this.lattices.get(lattice)?.delete(name);
  }

  /** Sorted by name: wadm keeps the per-lattice index as a `BTreeSet`. */
  list(lattice: string): StoredApp[] {
    const apps = [...(this.lattices.get(lattice)?.values() ?? [])];
    return apps.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  clear(): void {
    this.lattices.clear();
  }
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A ULID: 10 chars of millisecond time and 16 of randomness, Crockford base32. */
export function ulid(now = Date.now()): string {
  let time = '';
  for (let t = now, i = 0; i < 10; i++, t = Math.floor(t / 32)) time = CROCKFORD[t % 32] + time;
  const random = [...randomBytes(16)].map((b) => CROCKFORD[b % 32]).join('');
  return time + random;
}
