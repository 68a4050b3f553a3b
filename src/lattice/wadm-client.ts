// A client of wadm's NATS API (wadm 0.21): one method per operation we use, each reply checked
// against its schema. Transport trouble, and storage errors that outlast a few retries, are
// thrown as WadmUnavailableError; every other answer is returned for the caller to judge.
import { headers, type MsgHdrs, type NatsConnection } from 'nats';
import { compile, type Checker } from '../schema/validator.js';
import { badReply, outcomeOf, unavailable, WadmUnavailableError } from './errors.js';
import { LatticeLimiters } from './limiter.js';
import { requestMuxOf } from './request-mux.js';
import { SignsOfLife } from './signs-of-life.js';
import { timeLeft } from '../plumbing/deadline.js';
import { apiSubject, grantFor, type ModelOperation } from './subjects.js';
import type { KeyHolds } from '../core/facts.js';
import type { ListedModel } from '../core/census.js';
import {
  GetReplySchema,
  ListReplySchema,
  PutReplySchema,
  ReplySchema,
  StatusReplySchema,
  VersionsReplySchema,
  WadmStatusSchema,
  type WadmStatus,
} from './wire.js';
import type { Static } from '@sinclair/typebox';

export interface WadmClientOptions {
  connection: () => NatsConnection | undefined;
  apiPrefix: string;
  timeoutMs: number;
  /** Called once per NATS request sent, for metrics and liveness; `ok` means wadm answered. */
  onRequest?: (lattice: string, operation: ModelOperation, outcome: string, ms: number) => void;
  /**
   * Called when wadm's reply comes after the request timed out: wadm is there, slower than the
   * wait allowed (WADM_TIMEOUT_MS, or the hook call's time left).
   */
  onLateReply?: (lattice: string, operation: ModelOperation) => void;
  /** Called when a read joins an identical one in flight instead of being sent. */
  onShared?: (operation: ModelOperation) => void;
  /** wadm requests in flight per lattice; more wait (up to timeoutMs) for a slot. */
  maxInFlightPerLattice?: number;
}

/** Reads that may be shared by callers asking the same question at the same time. */
const SHAREABLE: ReadonlySet<ModelOperation> = new Set(['versions', 'get', 'status', 'history']);
const PROBE_NAME = 'wasmcloud-metacontroller-liveness';

/** `versions`: how many versions the model holds after the put, as wadm counted them. */
export type PutOutcome = { kind: 'created'; versions?: number } | { kind: 'exists' } | { kind: 'rejected'; message: string };
export type WriteOutcome = { kind: 'done' } | { kind: 'notfound' } | { kind: 'rejected'; message: string };
/** `busy`: no answer in time, but wadm answered meanwhile requests of ours sent before the probe, in time or late (signs-of-life.ts). */
export type ProbeOutcome = 'answered' | 'busy';

/** A manifest as wadm returns it: the fields we read are checked, the rest passes through. */
type StoredManifest = NonNullable<Static<typeof GetReplySchema>['manifest']> & Record<string, unknown>;

const checkReply = compile<Static<typeof ReplySchema>>(ReplySchema);
const checkPut = compile<Static<typeof PutReplySchema>>(PutReplySchema);
const checkVersions = compile<Static<typeof VersionsReplySchema>>(VersionsReplySchema);
const checkGet = compile<Static<typeof GetReplySchema>>(GetReplySchema);
const checkList = compile<Static<typeof ListReplySchema>>(ListReplySchema);
const checkStatus = compile<Static<typeof StatusReplySchema>>(StatusReplySchema);
const checkWadmStatus = compile<WadmStatus>(WadmStatusSchema);

const STORAGE_ERROR = 'Internal storage error';
const STORAGE_RETRIES = [50, 150, 400];

export class WadmClient {
  private readonly limiters: LatticeLimiters;
  private readonly inFlightReads = new Map<string, Promise<unknown>>();
  /** How long wadm has lately taken to answer each operation (a moving average), once it answered one. */
  private readonly typicalMs = new Map<ModelOperation, number>();
  /** Which requests of ours wadm answered, in the order we sent them, for every lattice. */
  private readonly life = new SignsOfLife();

  constructor(private readonly options: WadmClientOptions) {
    this.limiters = new LatticeLimiters(options.maxInFlightPerLattice ?? 32);
  }

  async versions(lattice: string, name: string): Promise<{ version: string; deployed: boolean }[] | null> {
    const reply = await this.call(lattice, 'versions', name, '', checkVersions);
    if (reply.result === 'notfound') return null;
    if (reply.result !== 'success') throw badReply('versions', reply);
    return reply.versions ?? [];
  }

  /** Annotations of a version (the newest without `version`), or null when there is none. */
  async annotations(lattice: string, name: string, version?: string): Promise<Record<string, string> | null> {
    return (await this.metadata(lattice, name, version))?.annotations ?? null;
  }

  /**
   * The stored manifest's name (another lattice's model may share the key), annotations and size
   * as wadm serialises it (its KV value holds every version: see core/budget.ts).
   */
  async metadata(
    lattice: string,
    name: string,
    version?: string,
  ): Promise<{ name: string; annotations: Record<string, string>; bytes: number } | null> {
    const manifest = await this.manifest(lattice, name, version);
    if (manifest === null) return null;
    const { metadata } = manifest;
    return { name: metadata.name, annotations: metadata.annotations ?? {}, bytes: Buffer.byteLength(JSON.stringify(manifest)) };
  }

  /**
   * What the KV key of (lattice, name) holds, from one small reply: `unreadable` for a storage
   * error, which an index gives every time (wadm cannot read it as a model), so not retried.
   */
  async keyHolds(lattice: string, name: string): Promise<KeyHolds | 'unreadable'> {
    const reply = await this.call(lattice, 'versions', name, '', checkVersions, undefined, false);
    if (reply.result === 'notfound') return 'nothing';
    if (reply.result === 'success') return 'model';
    if ((reply.message ?? '').includes(STORAGE_ERROR)) return 'unreadable';
    throw badReply('versions', reply);
  }

  /** The whole manifest of a version (the newest without `version`), or null when there is none. */
  async manifest(lattice: string, name: string, version?: string): Promise<StoredManifest | null> {
    const reply = await this.call(lattice, 'get', name, version === undefined ? '' : JSON.stringify({ version }), checkGet);
    // A named version that does not exist is an error reply, not notfound.
    if (reply.result === 'notfound' || (reply.result === 'error' && version !== undefined)) return null;
    if (reply.result !== 'success' || !reply.manifest) throw badReply('get', reply);
    return reply.manifest;
  }

  /**
   * The lattice's models: name, newest version, deployed version (null when none is deployed) and
   * status (absent when wadm has none). wadm answers in one message: past NATS's max_payload (a
   * few thousand models) it cannot send it.
   */
  async list(lattice: string): Promise<ListedModel[]> {
    const reply = await this.call(lattice, 'get', undefined, '', checkList);
    if (reply.result !== 'success') throw badReply('list', reply);
    return (reply.models ?? []).map((m) => {
      const model = { name: m.name, version: m.version ?? '', deployed: m.deployed_version ?? null };
      const status = listedStatus(m.detailed_status);
      return status === undefined ? model : { ...model, status };
    });
  }

  async put(lattice: string, manifestJson: string): Promise<PutOutcome> {
    const reply = await this.call(lattice, 'put', undefined, manifestJson, checkPut, 'application/json');
    // `created` and `newversion` alike: wadm says which from the count it stored, which the core
    // compares with the versions it read (a first put that raced another's meets a model).
    if (reply.result === 'created' || reply.result === 'newversion') {
      return reply.total_versions === undefined ? { kind: 'created' } : { kind: 'created', versions: reply.total_versions };
    }
    const message = reply.message ?? '';
    // wadm has no idempotent put: an existing version is an error we must recognise by text.
    if (/Manifest version .* already exists/.test(message)) return { kind: 'exists' };
    return { kind: 'rejected', message };
  }

  async deploy(lattice: string, name: string, version: string): Promise<WriteOutcome> {
    const outcome = await this.write(lattice, 'deploy', name, JSON.stringify({ version }), 'acknowledged');
    // The version we put is gone: another wadm instance's put of a racing first version replaced
    // the model (wadm writes a new key without compare-and-set). The model is not what we read.
    if (outcome.kind === 'rejected' && /does not have (a|the specified) version/.test(outcome.message)) return { kind: 'notfound' };
    return outcome;
  }

  undeploy(lattice: string, name: string): Promise<WriteOutcome> {
    return this.write(lattice, 'undeploy', name, '{}', 'acknowledged');
  }

  /** Deletes one version, or every version (and so undeploys) when version is null. */
  async delete(lattice: string, name: string, version: string | null): Promise<WriteOutcome> {
    const body = version === null ? '{}' : JSON.stringify({ version });
    const reply = await this.call(lattice, 'del', name, body, checkReply);
    // wadm answers `deleted` with a storage error message when the last delete failed.
    if (reply.result === 'deleted' && reply.message?.includes(STORAGE_ERROR)) {
      throw new WadmUnavailableError('StorageError', reply.message);
    }
    if (reply.result === 'deleted' || reply.result === 'noop') return { kind: 'done' };
    return { kind: 'rejected', message: reply.message ?? '' };
  }

  /**
   * Proves that wadm serves this lattice's API, as cheaply as wadm allows: wadm 0.21 answers
   * `model.history` at once with an error, touching no storage. Any reply will do. A probe that
   * times out while wadm answered requests of ours sent before it (even ones that had timed out)
   * waited behind them in wadm's one queue: `busy`, not a failure. Else its timeout is thrown:
   * wadm gave no sign of life.
   */
  async probe(lattice: string): Promise<ProbeOutcome> {
    const watch = this.life.watch();
    try {
      await this.call(lattice, 'history', PROBE_NAME, '', checkReply);
      return 'answered';
    } catch (err) {
      if (
        err instanceof WadmUnavailableError &&
        err.reason === 'Timeout' &&
        (await this.life.heard(watch, timeLeft(this.options.timeoutMs)))
      )
        return 'busy';
      throw err;
    } finally {
      this.life.end(watch);
    }
  }

  async status(lattice: string, name: string): Promise<WadmStatus> {
    const reply = await this.call(lattice, 'status', name, '', checkStatus);
    if (reply.result !== 'ok') throw badReply('status', reply);
    // wadm answers `ok` without a status only in theory; treat it like an unknown app.
    return reply.status ?? { status: { type: 'undeployed' } };
  }

  private async write(lattice: string, op: ModelOperation, name: string, body: string, success: string): Promise<WriteOutcome> {
    const reply = await this.call(lattice, op, name, body, checkReply);
    if (reply.result === success) return { kind: 'done' };
    if (reply.result === 'notfound') return { kind: 'notfound' };
    return { kind: 'rejected', message: reply.message ?? '' };
  }

  private async call<T extends { result: string; message?: string }>(
    lattice: string,
    op: ModelOperation,
    name: string | undefined,
    body: string,
    check: Checker<T>,
    contentType?: string,
    retryStorage = true,
  ): Promise<T> {
    const subject = apiSubject(this.options.apiPrefix, lattice, op, name);
    for (let attempt = 0; ; attempt++) {
      const reply = await this.shared(op, lattice, subject, body, contentType);
      if (!check(reply)) {
        throw new WadmUnavailableError('BadReply', `unexpected ${op} reply: ${check.problems(reply, 'reply').join('; ')}`);
      }
      const storageError = reply.result === 'error' && (reply.message ?? '').includes(STORAGE_ERROR);
      if (!storageError || !retryStorage) return reply;
      // Storage errors include KV compare-and-set conflicts between writers: worth a retry, if the
      // hook call has the time.
      const delay = STORAGE_RETRIES[attempt];
      if (delay === undefined || timeLeft(delay + 1) <= delay)
        throw new WadmUnavailableError('StorageError', reply.message ?? STORAGE_ERROR);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  /**
   * Identical reads in flight are sent once (singleflight); every request waits for a lattice
   * slot. Each wait lasts at most what the hook call being served has left (plumbing/deadline.ts).
   */
  private shared(op: ModelOperation, lattice: string, subject: string, body: string, contentType?: string): Promise<unknown> {
    const send = () => this.limiters.run(lattice, () => this.request(lattice, op, subject, body, contentType), this.wait(subject), subject);
    if (!SHAREABLE.has(op)) return send();
    const key = `${subject}\n${body}`;
    const pending = this.inFlightReads.get(key);
    if (pending) {
      this.options.onShared?.(op);
      return atMost(pending, this.wait(subject), subject);
    }
    const promise = send().finally(() => this.inFlightReads.delete(key));
    this.inFlightReads.set(key, promise);
    return promise;
  }

  private async request(lattice: string, op: ModelOperation, subject: string, body: string, contentType?: string): Promise<unknown> {
    const nc = this.options.connection();
    if (!nc) throw new WadmUnavailableError('Disconnected', 'not connected to NATS');
    const timeout = this.wait(subject);
    // A request that cannot be answered in the time left is not sent: it would still cost wadm its
    // work, and hold a lattice slot another call could use.
    const typical = this.typicalMs.get(op);
    if (typical !== undefined && timeout < this.options.timeoutMs && timeout < typical)
      throw new WadmUnavailableError(
        'Timeout',
        `${subject}: not sent, wadm lately takes ${Math.round(typical)} ms to answer it and this hook call has ${timeout} ms left`,
      );
    const started = performance.now();
    let outcome = 'ok';
    const seq = this.life.sending();
    let answered = false;
    try {
      const msg = await requestMuxOf(nc).request(subject, body, {
        timeout,
        ...(contentType ? { headers: contentTypeHeader(contentType) } : {}),
        // wadm still works through a request we stopped waiting for: its answer is a sign of life.
        onLateReply: () => {
          this.life.answeredLate(seq);
          this.options.onLateReply?.(lattice, op);
        },
      });
      answered = true;
      const took = performance.now() - started;
      this.typicalMs.set(op, typical === undefined ? took : typical + (took - typical) * 0.25);
      return JSON.parse(msg.string()) as unknown;
    } catch (err) {
      outcome = outcomeOf(err);
      throw unavailable(err, subject, timeout, grantFor(this.options.apiPrefix, lattice));
    } finally {
      this.life.ended(seq, answered);
      this.options.onRequest?.(lattice, op, outcome, performance.now() - started);
    }
  }

  /** A wait of at most WADM_TIMEOUT_MS, cut to the hook call's time left; none left is a Timeout now. */
  private wait(subject: string): number {
    const ms = Math.ceil(timeLeft(this.options.timeoutMs));
    if (ms <= 0) throw new WadmUnavailableError('Timeout', `${subject}: no time left within this hook call`);
    return ms;
  }
}

/** Another call's read, waited for at most `ms`: that call may have more time than this one. */
function atMost<T>(pending: Promise<T>, ms: number, subject: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new WadmUnavailableError('Timeout', `${subject}: no reply within ${Math.round(ms)} ms`)), ms);
  });
  return Promise.race([pending, expired]).finally(() => clearTimeout(timer));
}

/**
 * wadm's list gives a model without any status this placeholder (handlers.rs list_models), where
 * `model.status` gives `undeployed`: it says nothing, so the status is read as before.
 */
const NO_STATUS_YET = 'Waiting for status: Lattice contains no hosts, deployment not started.';

function listedStatus(status: unknown): WadmStatus | undefined {
  if (!checkWadmStatus(status)) return undefined;
  const placeholder = status.status.type === 'waiting' && status.status.message === NO_STATUS_YET && !status.scalers?.length;
  return placeholder ? undefined : status;
}

/** One headers object per content type, built once: nats.js only reads them (every put sends one). */
const CONTENT_TYPE_HEADERS = new Map<string, MsgHdrs>();

function contentTypeHeader(value: string): MsgHdrs {
  let h = CONTENT_TYPE_HEADERS.get(value);
  if (h === undefined) {
    h = headers();
    h.set('Content-Type', value);
    CONTENT_TYPE_HEADERS.set(value, h);
  }
  return h;
}
