// The latest wadm status of every application, kept current from the `wadm.status.{lattice}.*`
// subscription (see feed()) and from model.status replies. wadm's status does not say which version it
// describes, so the cache also remembers when we deployed: a status that may predate our
// deploy is flagged, and the core will not call it Ready.
import type { StatusFacts } from '../core/facts.js';
import { compile } from '../schema/validator.js';
import type { Feed } from './watch.js';
import { Lru } from '../core/lru.js';
import { statusSubject } from './subjects.js';
import { WadmStatusSchema, type WadmStatus } from './wire.js';

export interface StatusCacheOptions {
  maxEntries: number;
  /**
   * wadm publishes a status only when it changes, so a deploy that changes nothing wadm reports
   * (say, only an annotation) is followed by no message at all. After this long the latest
   * status is taken to describe the deployed version.
   */
  deployGraceMs: number;
  now: () => number;
}

interface Entry {
  status: WadmStatus;
  seq: number;
  /** Only a message received on the subscription is known to be newer than what we saw before. */
  fromStream: boolean;
}

const checkStatus = compile<WadmStatus>(WadmStatusSchema);

export class StatusCache {
  private readonly entries: Lru<string, Entry>;
  private readonly deploys: Lru<string, { seq: number; at: number }>;
  private seq = 0;

  constructor(private readonly options: StatusCacheOptions) {
    this.entries = new Lru(options.maxEntries);
    this.deploys = new Lru(options.maxEntries);
  }

  get size(): number {
    return this.entries.size;
  }

  get evictions(): number {
    return this.entries.evictions;
  }

  lookup(lattice: string, name: string): StatusFacts | undefined {
    const key = `${lattice}/${name}`;
    const entry = this.entries.get(key);
    return entry && { status: entry.status, predatesDeploy: this.predatesDeploy(key, entry) };
  }

  /** The current entries themselves (status and deploy mark): new objects after every change. */
  entriesOf(lattice: string, name: string): [object | undefined, object | undefined] {
    const key = `${lattice}/${name}`;
    return [this.entries.get(key), this.deploys.get(key)];
  }

  /** A status read with model.status: we cannot tell when wadm published it. */
  remember(lattice: string, name: string, wadmStatus: WadmStatus): StatusFacts {
    const key = `${lattice}/${name}`;
    const status = lean(wadmStatus);
    const entry = { status, seq: ++this.seq, fromStream: false };
    this.entries.set(key, entry);
    return { status, predatesDeploy: this.predatesDeploy(key, entry) };
  }

  deployed(lattice: string, name: string): void {
    this.deploys.set(`${lattice}/${name}`, { seq: ++this.seq, at: this.options.now() });
  }

  /** After a reconnect, messages may have been missed: forget everything, ask wadm again. */
  forget(): void {
    this.entries.clear();
  }

  private predatesDeploy(key: string, entry: Entry): boolean {
    const deploy = this.deploys.get(key);
    if (!deploy || this.options.now() - deploy.at > this.options.deployGraceMs) return false;
    return !(entry.fromStream && entry.seq > deploy.seq);
  }

  /** The status feed of a lattice's `wadm.status.{lattice}.*` subscription. */
  feed(): Feed {
    return {
      subject: statusSubject,
      receive: (lattice, msg) => {
        const status: unknown = JSON.parse(msg.string());
        if (!checkStatus(status)) throw new Error(checkStatus.problems(status, 'status').join('; '));
        const name = msg.subject.slice(`wadm.status.${lattice}.`.length);
        this.entries.set(`${lattice}/${name}`, { status: lean(status), seq: ++this.seq, fromStream: true });
      },
    };
  }
}

/** Only what a status verdict reads: thousands of these are kept (scaler ids are 64-char hashes). */
function lean(status: WadmStatus): WadmStatus {
  const info = (s: WadmStatus['status']) => (s.message ? { type: s.type, message: s.message } : { type: s.type });
  const scalers = status.scalers?.map((s) => ({
    ...(s.kind !== undefined ? { kind: s.kind } : {}),
    ...(s.name !== undefined ? { name: s.name } : {}),
    status: info(s.status),
  }));
  return scalers && scalers.length > 0 ? { status: info(status.status), scalers } : { status: info(status.status) };
}
