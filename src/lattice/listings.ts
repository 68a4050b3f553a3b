// What a WasmCloudLattice needs of wadm: the lattice's list of applications and the owners of
// those its status shows, at a cost that does not grow with its hook calls. The list is the one
// the census already reads (census.ts), once per check period and lattice, shared with the
// applications' own checks; the owner of a version never changes while the version exists, so it
// is read once per version and TTL. A resync within the period asks wadm nothing. A lattice whose
// list wadm cannot send (too large for one NATS message) is probed instead, once per period, to
// tell an answering wadm from a silent one.
import { applicationsShown, type ListedApplication, type WadmView } from '../core/lattice.js';
import type { ListedModel } from '../core/census.js';
import { OWNER_ANNOTATION } from '../core/names.js';
import { LATTICE_LIMITS } from '../schema/lattice.js';
import { Lru } from '../plumbing/lru.js';
import type { LatticeCensus } from './census.js';
import { WadmUnavailableError } from './errors.js';
import type { WadmClient } from './wadm-client.js';

export interface ListingsOptions {
  now: () => number;
  /** A list older than this is read again (CHECK_PERIOD_MS: the census's own period). */
  periodMs: number;
  /** An owner read is asked again after this long (MODEL_CACHE_TTL_SECONDS). */
  ownerTtlMs: number;
  /** Lattices whose list is kept: those WasmCloudLattices asked about lately. */
  maxLattices: number;
  isConnected: () => boolean;
}

/** A lattice's list as last read: every count, and the applications its status may show. */
interface Listing {
  at: number;
  total: number;
  shown: ListedApplication[];
}

/** Owners remembered, by lattice, name and version: a version's annotations never change while it exists. */
const MAX_OWNERS = 10_000;

export class LatticeListings {
  private readonly listings: Lru<string, Listing>;
  private readonly probed = new Lru<string, { at: number; reachable: boolean }>(1000);
  private readonly owners = new Lru<string, { owner: string | null; at: number }>(MAX_OWNERS);

  constructor(
    private readonly census: LatticeCensus,
    private readonly client: WadmClient,
    private readonly options: ListingsOptions,
  ) {
    this.listings = new Lru(options.maxLattices);
  }

  /** The census read a lattice's list: kept if a WasmCloudLattice asked about the lattice. */
  listed(lattice: string, at: number, models: ListedModel[]): void {
    if (this.listings.get(lattice) === undefined && !this.asked.has(lattice)) return;
    const shown = applicationsShown(models.map(summary));
    this.listings.set(lattice, { at, total: models.length, shown });
  }

  /** Lattices a WasmCloudLattice asked about whose list has not been read yet. */
  private readonly asked = new Set<string>();

  /** What wadm says of the lattice: its list (fresh within the period) with the owners shown, or why there is none. */
  async view(lattice: string): Promise<WadmView> {
    if (!this.options.isConnected()) return { kind: 'unavailable', reason: 'Disconnected', message: 'not connected to NATS' };
    let listing = this.fresh(lattice);
    if (listing === undefined) {
      if (this.asked.size >= this.options.maxLattices) this.asked.clear();
      this.asked.add(lattice);
      await this.census.check(lattice);
      this.asked.delete(lattice);
      listing = this.fresh(lattice);
    }
    if (listing !== undefined)
      return { kind: 'listed', total: listing.total, models: listing.shown, owners: await this.ownersOf(lattice, listing) };
    const failed = this.census.unlisted(lattice);
    if (failed === undefined)
      return { kind: 'unavailable', reason: 'Timeout', message: `the list of lattice "${lattice}" could not be read in time` };
    const { error, tooLarge } = failed;
    if (!tooLarge) return { kind: 'unavailable', reason: error.reason, message: error.message };
    return { kind: 'unlisted', reason: error.reason, message: error.message, tooLarge, reachable: await this.reachable(lattice) };
  }

  private fresh(lattice: string): Listing | undefined {
    const listing = this.listings.get(lattice);
    return listing !== undefined && this.options.now() - listing.at < this.options.periodMs ? listing : undefined;
  }

  /** Whether wadm answers for the lattice, probed at most once per period. */
  private async reachable(lattice: string): Promise<boolean> {
    const now = this.options.now();
    const known = this.probed.get(lattice);
    if (known !== undefined && now - known.at < this.options.periodMs) return known.reachable;
    let reachable = true;
    try {
      await this.client.probe(lattice);
    } catch (err) {
      if (!(err instanceof WadmUnavailableError)) throw err;
      reachable = false;
    }
    this.probed.set(lattice, { at: now, reachable });
    return reachable;
  }

  /**
   * The owner annotation of each application shown: of its deployed version, else its newest.
   * Those not remembered are read at once, side by side; one that cannot be read stays unknown.
   */
  private async ownersOf(lattice: string, listing: Listing): Promise<Map<string, string | null>> {
    const now = this.options.now();
    const owners = new Map<string, string | null>();
    const reads = listing.shown.map(async (app) => {
      const version = app.deployed ?? app.version;
      if (version === '') return;
      const key = `${lattice}\n${app.name}\n${version}`;
      const known = this.owners.get(key);
      if (known !== undefined && now - known.at < this.options.ownerTtlMs) return void owners.set(app.name, known.owner);
      try {
        const annotations = await this.client.annotations(lattice, app.name, version);
        // null: the version is gone since the list was read; its owner is unknown until the next one.
        if (annotations === null) return;
        const owner = annotations[OWNER_ANNOTATION] ?? null;
        this.owners.set(key, { owner, at: now });
        owners.set(app.name, owner);
      } catch (err) {
        if (!(err instanceof WadmUnavailableError)) throw err;
      }
    });
    await Promise.all(reads);
    return owners;
  }
}

function summary(model: ListedModel): ListedApplication {
  const app: ListedApplication = { name: model.name, version: model.version, deployed: model.deployed };
  if (model.status !== undefined) {
    app.status = model.status.status.type;
    if (model.status.status.message !== undefined) app.message = model.status.status.message.slice(0, LATTICE_LIMITS.text);
  }
  return app;
}
