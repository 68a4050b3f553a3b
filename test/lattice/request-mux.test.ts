// src/lattice/request-mux.ts against a real nats-server: what nats.js's request() did for the wadm
// client (replies by token, no responders, refused subjects, close and drain, reconnects), with
// the errors errors.ts judges alike, and what it did not: a reply that comes after the request
// timed out is told to whoever sent it. A responder of the test's own stands in for wadm, and
// answers only when a test says so: no test waits for a time, every timeout is the request's own.
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, ErrorCode, headers, NatsError, type ConnectionOptions, type Msg, type NatsConnection } from 'nats';
import { outcomeOf, unavailable, WadmUnavailableError } from '../../src/lattice/errors.js';
import { RequestMux } from '../../src/lattice/request-mux.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { until } from '../support/wait.js';

/** Long enough that only a refusal, a close or a reply ends a request that is not meant to time out. */
const NO_TIMEOUT = 30_000;
/** For requests meant to time out: the test holds their request until they have. */
const SHORT = 50;

/** `admin` may do anything (the responder); the others are limited as each test needs. */
const NATS_CONFIG = `authorization {
  users = [
    { user: admin, password: "admin-pw" }
    { user: nopub, password: "nopub-pw",
      permissions { publish { allow: ["svc.allowed.>"] }, subscribe { allow: ["_INBOX.>"] } } }
    { user: noinbox, password: "noinbox-pw",
      permissions { publish { allow: ["svc.>"] }, subscribe { allow: ["other.>"] } } }
    { user: prefixed, password: "prefixed-pw",
      permissions { publish { allow: ["svc.>"] }, subscribe { allow: ["_R.svc.>"] } } }
  ]
}
no_auth_user: admin
`;

let dir: string;
let nats: NatsServer;
let responder: Responder;
/** Every connection a test opens, closed after it. */
const opened: NatsConnection[] = [];

/** Keeps every request on `svc.>` until the test answers it; answers `svc.echo.>` at once with the reply subject. */
class Responder {
  private readonly held: Msg[] = [];
  private constructor(readonly nc: NatsConnection) {}

  static async start(url: string): Promise<Responder> {
    const nc = await connect({ servers: url, name: 'responder', maxReconnectAttempts: -1, reconnectTimeWait: 50 });
    const responder = new Responder(nc);
    nc.subscribe('svc.>', {
      callback: (_err, msg) => (msg.subject.startsWith('svc.echo.') ? msg.respond(msg.reply) : responder.held.push(msg)),
    });
    await nc.flush();
    return responder;
  }

  /** The next request that arrived (waiting for it), oldest first. */
  next(): Promise<Msg> {
    return until(() => this.held.shift(), { what: 'a request at the responder' });
  }

  /** Answers `msg` with `body` and waits until NATS has it. */
  async answer(msg: Msg, body: string): Promise<void> {
    this.nc.publish(msg.reply!, body);
    await this.nc.flush();
  }
}

async function client(options: Partial<ConnectionOptions> = {}): Promise<NatsConnection> {
  const nc = await connect({ servers: nats.url, noAsyncTraces: true, ...options });
  opened.push(nc);
  return nc;
}

/** The request's rejection, a NatsError (with the code nats.js's request() gives). */
async function failure(request: Promise<Msg>): Promise<NatsError> {
  const err = await request.then(
    () => assert.fail('the request was answered'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof NatsError, `a NatsError, not ${String(err)}`);
  return err;
}

/** How the wadm client labels and reports it (errors.ts): as before the mux. */
function judged(err: unknown): { outcome: string; reason: string; message: string } {
  const judgement: WadmUnavailableError = unavailable(err, 'svc.subject', 100, 'a grant');
  return { outcome: outcomeOf(err), reason: judgement.reason, message: judgement.message };
}

/** The inbox a reply subject belongs to: all but its last token (the request's). */
const inboxOf = (reply: string | undefined) => reply!.slice(0, reply!.lastIndexOf('.'));

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'request-mux-'));
  const configFile = join(dir, 'nats-server.conf');
  writeFileSync(configFile, NATS_CONFIG);
  nats = await startNatsServer({ jetstream: false, configFile });
  responder = await Responder.start(nats.url);
});
after(async () => {
  await responder?.nc.close();
  await nats?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  opened.length = 0;
});
afterEach(async () => {
  for (const nc of opened) if (!nc.isClosed()) await nc.close();
});

describe('a request', () => {
  it('gets its own reply, by its token, through one inbox subscription, with its headers sent', async () => {
    const mux = new RequestMux(await client());
    const contentType = headers();
    contentType.set('Content-Type', 'application/json');
    const replies = ['a', 'b', 'c'].map((name) =>
      mux.request(`svc.allowed.${name}`, `ask ${name}`, { timeout: NO_TIMEOUT, headers: contentType }),
    );
    const asked = [await responder.next(), await responder.next(), await responder.next()];
    assert.deepEqual(
      asked.map((m) => m.headers?.get('Content-Type')),
      ['application/json', 'application/json', 'application/json'],
    );
    assert.equal(new Set(asked.map((m) => inboxOf(m.reply))).size, 1, 'one inbox for every request');
    assert.match(inboxOf(asked[0]!.reply), /^_INBOX\.\w+$/, "nats.js's default prefix");
    // Answered last first: each reply still reaches its own request.
    for (const msg of asked.reverse()) await responder.answer(msg, `re: ${msg.string()}`);
    assert.deepEqual(
      (await Promise.all(replies)).map((m) => m.string()),
      ['re: ask a', 're: ask b', 're: ask c'],
    );
    assert.equal(mux.pending, 0);
  });

  it("subscribes under the connection's own inbox prefix, which its user may be limited to", async () => {
    const mux = new RequestMux(await client({ user: 'prefixed', pass: 'prefixed-pw', inboxPrefix: '_R.svc' }));
    const reply = mux.request('svc.allowed.x', 'ask', { timeout: NO_TIMEOUT });
    const asked = await responder.next();
    assert.match(asked.reply!, /^_R\.svc\.\w+\.\w+$/);
    await responder.answer(asked, 'yes');
    assert.equal((await reply).string(), 'yes');
  });

  it('fails with NoResponders when nothing listens on its subject, as nats.js says it', async () => {
    const mux = new RequestMux(await client());
    const err = await failure(mux.request('nobody.listens', 'ask', { timeout: NO_TIMEOUT, onLateReply: () => assert.fail() }));
    assert.equal(err.code, ErrorCode.NoResponders);
    assert.deepEqual([judged(err).outcome, judged(err).reason], ['no_responders', 'NoResponders']);
    assert.equal(mux.remembered, 0, 'no late reply to wait for');
  });
});

describe('a reply after the timeout', () => {
  it('is told once to whoever sent the request, which had failed as a Timeout', async () => {
    const mux = new RequestMux(await client());
    let told = 0;
    const request = mux.request('svc.allowed.slow', 'ask', { timeout: SHORT, onLateReply: () => told++ });
    const asked = await responder.next();
    const err = await failure(request);
    assert.equal(err.code, ErrorCode.Timeout);
    assert.deepEqual([judged(err).outcome, judged(err).reason], ['timeout', 'Timeout']);
    assert.equal(mux.remembered, 1);
    await responder.answer(asked, 'late');
    await until(() => told === 1, { what: 'the late reply told' });
    // A second copy of the reply (a redelivery) tells nothing more: seen once a request answered in time is.
    await responder.answer(asked, 'late again');
    const inTime = mux.request('svc.allowed.fast', 'ask', { timeout: NO_TIMEOUT });
    await responder.answer(await responder.next(), 'now');
    assert.equal((await inTime).string(), 'now');
    assert.equal(told, 1);
    assert.equal(mux.remembered, 0);
  });

  it('is told only for the newest timed-out requests it remembers, the oldest forgotten first', async () => {
    const mux = new RequestMux(await client(), 2);
    const told: number[] = [];
    const requests = [1, 2, 3].map((n) => mux.request(`svc.allowed.${n}`, 'ask', { timeout: SHORT, onLateReply: () => told.push(n) }));
    const asked = [await responder.next(), await responder.next(), await responder.next()];
    for (const request of requests) assert.equal((await failure(request)).code, ErrorCode.Timeout);
    assert.equal(mux.remembered, 2);
    // In order on one connection: once the third is told, the first's reply has been seen too.
    await responder.answer(asked[0]!, 'late 1');
    await responder.answer(asked[2]!, 'late 3');
    await until(() => told.includes(3), { what: 'the third late reply told' });
    assert.deepEqual(told, [3], 'the first was forgotten');
  });
});

describe('a refusal by NATS', () => {
  it('fails a request whose subject its user may not publish, with PermissionsViolation, and the next request goes on', async () => {
    const mux = new RequestMux(await client({ user: 'nopub', pass: 'nopub-pw' }));
    const refused = mux.request('svc.denied.x', 'ask', { timeout: NO_TIMEOUT });
    const allowed = mux.request('svc.allowed.x', 'ask', { timeout: NO_TIMEOUT });
    const err = await failure(refused);
    assert.equal(err.code, ErrorCode.PermissionsViolation);
    assert.deepEqual(err.permissionContext, { operation: 'publish', subject: 'svc.denied.x' });
    const { outcome, reason, message } = judged(err);
    assert.deepEqual([outcome, reason], ['permission_denied', 'NotPermitted']);
    assert.match(message, /refused this service's user to publish to "svc\.subject".*grant it a grant/);
    await responder.answer(await responder.next(), 'yes');
    assert.equal((await allowed).string(), 'yes');
  });

  it('fails every waiting request when its user may not subscribe to the inbox, and tries again at the next', async () => {
    const mux = new RequestMux(await client({ user: 'noinbox', pass: 'noinbox-pw' }));
    const first = [
      mux.request('svc.allowed.a', 'ask', { timeout: NO_TIMEOUT }),
      mux.request('svc.allowed.b', 'ask', { timeout: NO_TIMEOUT }),
    ];
    for (const request of first) {
      const err = await failure(request);
      assert.equal(err.code, ErrorCode.PermissionsViolation);
      assert.equal(err.permissionContext?.operation, 'subscription');
      assert.match(err.permissionContext?.subject ?? '', /^_INBOX\.\w+\.\*$/);
      const { outcome, reason, message } = judged(err);
      assert.deepEqual([outcome, reason], ['permission_denied', 'NotPermitted']);
      assert.match(message, /subscribe to its reply inbox "_INBOX\.\w+\.\*".*grant it subscribe on "_INBOX\.>"/);
    }
    const again = await failure(mux.request('svc.allowed.c', 'ask', { timeout: NO_TIMEOUT }));
    assert.equal(again.code, ErrorCode.PermissionsViolation, 'refused again, not left waiting');
    assert.equal(mux.pending, 0);
    // The responder got them all: wadm would have answered into an inbox NATS never made.
    for (let i = 0; i < 3; i++) await responder.next();
  });
});

describe('the connection', () => {
  it('fails the requests waiting when it closes as Disconnected, not as a Timeout, and refuses new ones', async () => {
    const nc = await client();
    const mux = new RequestMux(nc);
    const waiting = mux.request('svc.allowed.x', 'ask', { timeout: NO_TIMEOUT, onLateReply: () => assert.fail() });
    await responder.next();
    await nc.close();
    const err = await failure(waiting);
    assert.equal(err.code, ErrorCode.ConnectionClosed);
    assert.deepEqual([judged(err).outcome, judged(err).reason], ['error', 'Disconnected']);
    const after = await failure(mux.request('svc.allowed.y', 'ask', { timeout: NO_TIMEOUT }));
    assert.equal(after.code, ErrorCode.ConnectionClosed);
    assert.equal(mux.remembered, 0);
  });

  it('fails the requests waiting when it drains, and refuses new ones meanwhile as nats.js does', async () => {
    const nc = await client();
    const mux = new RequestMux(nc);
    const waiting = mux.request('svc.allowed.x', 'ask', { timeout: NO_TIMEOUT });
    await responder.next();
    const drained = nc.drain();
    const during = await failure(mux.request('svc.allowed.y', 'ask', { timeout: NO_TIMEOUT }));
    assert.equal(during.code, ErrorCode.ConnectionDraining);
    assert.equal(judged(during).reason, 'Disconnected');
    const err = await failure(waiting);
    assert.equal(err.code, ErrorCode.ConnectionClosed);
    assert.equal(judged(err).reason, 'Disconnected');
    await drained;
  });

  it('keeps its inbox across a reconnect: nats.js subscribes it again', async () => {
    const mux = new RequestMux(await client({ maxReconnectAttempts: -1, reconnectTimeWait: 50 }));
    /**
     * The inbox the echo's reply came through, or undefined while nobody listens: a request sent
     * while disconnected may be lost (nats.js drops what it buffered when it reconnects).
     */
    const echoed = () =>
      mux.request('svc.echo.x', 'ask', { timeout: 500 }).then(
        (reply) => inboxOf(reply.string()),
        (err: NatsError) => ([ErrorCode.NoResponders, ErrorCode.Timeout].includes(err.code as ErrorCode) ? undefined : Promise.reject(err)),
      );
    const before = await until(echoed, { what: 'the echo' });
    await nats.restart();
    // Both sides come back on their own; until the responder has, nobody listens.
    const after = await until(echoed, { what: 'both connections back, the responder listening' });
    assert.equal(after, before, 'the same inbox');
    assert.equal(mux.pending, 0);
  });
});
