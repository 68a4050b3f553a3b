// NATS authentication and TLS against a real nats-server, one per security mode: the whole
// service in-process with its secrets in files (as a mounted Kubernetes Secret). For each mode:
// the right credential connects and a hook call reaches NATS (no wadm runs, so the honest answer
// is LatticeUnavailable/NoResponders; a connection that is not up answers Disconnected); a wrong
// credential leaves the service up, unready, with one clear log line, and correcting the file
// is enough to connect; no secret reaches a log line. Rotation: the server changes its secret,
// the service reconnects with the rewritten file, without a restart.
import { after, describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOperator, createUserKey } from '../support/nats-auth/jwt.js';
import { createPki, type Pki } from '../support/nats-auth/pki.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { wasmApp, hookRequest } from '../support/resources.js';
import { CleanupStack, startService, type RunningService } from '../support/service.js';
import { until } from '../support/wait.js';

const CONNECT_ERROR = 'cannot connect to NATS; retrying';
const body = JSON.stringify(hookRequest(wasmApp().build()));

// ---- a mode: the server's configuration, the service's files and env, a wrong credential -------

interface Mode {
  /** nats-server configuration text (its listen address and port come from the command line). */
  serverConfig: string;
  /** URL scheme the service is given. */
  scheme: 'nats' | 'tls';
  /** The service's environment, without NATS_URL; files already written. */
  env: Record<string, string>;
  /** Overwrites the service's secret file(s) with a credential the server rejects. */
  spoil(): void;
  /** Writes the right credential back. */
  repair(): void;
  /** What the connect error must name when the credential is wrong. */
  problem: RegExp;
  /** Every secret text (right and wrong) that must never appear in a log line. */
  secrets: string[];
}

/** A secret file, with the trailing newline `kubectl create secret --from-file` keeps. */
function secretFile(dir: string, name: string, content: string): { path: string; write(content: string): void } {
  const path = join(dir, name);
  const write = (text: string) => writeFileSync(path, `${text}\n`, { mode: 0o600 });
  write(content);
  return { path, write };
}

/** The base64 lines of a PEM private key: any of them in a log line would be a leak. */
function pemBody(pem: string): string[] {
  return pem.split('\n').filter((line) => line.length >= 16 && !line.startsWith('-----'));
}

const MODES: Record<string, (dir: string, pki: () => Pki) => Mode> = {
  'user and password': (dir) => {
    const password = 'pw-right-7f3a9c1e5b';
    const wrong = 'pw-wrong-2d8e6b4a0c';
    const file = secretFile(dir, 'password', password);
    return {
      serverConfig: `authorization { users: [ { user: metacontroller, password: "${password}" } ] }\n`,
      scheme: 'nats',
      env: { NATS_USER: 'metacontroller', NATS_PASSWORD_FILE: file.path },
      spoil: () => file.write(wrong),
      repair: () => file.write(password),
      problem: /authorization violation/i,
      secrets: [password, wrong],
    };
  },
  token: (dir) => {
    const token = 'tok-right-9b1c7d3e5f';
    const wrong = 'tok-wrong-4a6c8e0b2d';
    const file = secretFile(dir, 'token', token);
    return {
      serverConfig: `authorization { token: "${token}" }\n`,
      scheme: 'nats',
      env: { NATS_TOKEN_FILE: file.path },
      spoil: () => file.write(wrong),
      repair: () => file.write(token),
      problem: /authorization violation/i,
      secrets: [token, wrong],
    };
  },
  'nkey seed': (dir) => {
    const user = createUserKey();
    const stranger = createUserKey();
    const file = secretFile(dir, 'seed', user.seed);
    return {
      serverConfig: `authorization { users: [ { nkey: ${user.publicKey} } ] }\n`,
      scheme: 'nats',
      env: { NATS_NKEY_SEED_FILE: file.path },
      spoil: () => file.write(stranger.seed),
      repair: () => file.write(user.seed),
      problem: /authorization violation/i,
      secrets: [user.seed, stranger.seed],
    };
  },
  'creds file (operator, account and user JWTs)': (dir) => {
    const operator = createOperator();
    const user = operator.user('metacontroller');
    // Same layout, but signed by an operator the server does not trust.
    const impostor = createOperator().user('metacontroller');
    const file = secretFile(dir, 'user.creds', user.creds);
    return {
      serverConfig: operator.serverConfig(),
      scheme: 'nats',
      env: { NATS_CREDS_FILE: file.path },
      spoil: () => file.write(impostor.creds),
      repair: () => file.write(user.creds),
      problem: /authorization violation/i,
      secrets: [user.jwt, user.seed, impostor.jwt, impostor.seed],
    };
  },
  'TLS verified with a CA file': (dir, pki) => {
    const { ca, server, rogueCa } = pki();
    const right = readText(ca);
    // A CA bundle that does not hold the server's issuer: the server cannot be verified.
    const wrong = readText(rogueCa);
    const caFile = secretFile(dir, 'ca.crt', right);
    return {
      serverConfig: `tls { cert_file: "${server.cert}", key_file: "${server.key}" }\n`,
      scheme: 'tls',
      env: { NATS_TLS_CA_FILE: caFile.path },
      spoil: () => caFile.write(wrong),
      repair: () => caFile.write(right),
      problem: /unable to verify|certificate/i,
      secrets: pki().privateKeys().flatMap(pemBody),
    };
  },
  'mutual TLS with a client certificate': (dir, pki) => {
    const { ca, server, client, untrustedClient } = pki();
    const cert = secretFile(dir, 'tls.crt', '');
    const key = secretFile(dir, 'tls.key', '');
    const use = (files: { cert: string; key: string }) => {
      cert.write(readText(files.cert));
      key.write(readText(files.key));
    };
    use(client);
    return {
      // Plain nats:// URL: a server that requires TLS upgrades the connection by itself.
      serverConfig: `tls { cert_file: "${server.cert}", key_file: "${server.key}", ca_file: "${ca}", verify: true }\n`,
      scheme: 'nats',
      env: { NATS_TLS_CA_FILE: ca, NATS_TLS_CERT_FILE: cert.path, NATS_TLS_KEY_FILE: key.path },
      spoil: () => use(untrustedClient),
      repair: () => use(client),
      problem: /alert unknown ca|client certificate/i,
      secrets: pki().privateKeys().flatMap(pemBody),
    };
  },
};

function readText(path: string): string {
  return readFileSync(path, 'utf8').trimEnd();
}

// ---- running one: nats-server with the mode's config, the service with the mode's env ---------

interface Setup {
  mode: Mode;
  nats: NatsServer;
  configFile: string;
  start(): Promise<RunningService>;
}

async function setUp(t: TestContext, modeName: string, pki: () => Pki): Promise<Setup> {
  // Cleanups run last-in first-out in one t.after: the service shuts down while its nats-server
  // is still up, then the server stops, then the temp files go.
  const cleanups = new CleanupStack();
  t.after(() => cleanups.run());
  const dir = mkdtempSync(join(tmpdir(), 'nats-sec-'));
  cleanups.after(() => rmSync(dir, { recursive: true, force: true }));
  const make = MODES[modeName];
  assert.ok(make, modeName);
  const mode = make(dir, pki);
  const configFile = join(dir, 'nats-server.conf');
  writeFileSync(configFile, mode.serverConfig);
  // jetstream: false, so that readiness is "port open": the default check connects without credentials.
  const nats = await startNatsServer({ jetstream: false, configFile });
  cleanups.after(() => nats.dispose());
  const url = `${mode.scheme}://127.0.0.1:${nats.port}`;
  return {
    mode,
    nats,
    configFile,
    start: () => startService(cleanups, { NATS_URL: url, WADM_TIMEOUT_MS: '500', ...mode.env }),
  };
}

// ---- observations ---------------------------------------------------------------------------------

interface ReadyCondition {
  status: string;
  reason: string;
  message: string;
}

async function syncReady(url: string): Promise<ReadyCondition> {
  const res = await fetch(`${url}/sync`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  assert.equal(res.status, 200);
  const answer = (await res.json()) as { status?: { conditions?: (ReadyCondition & { type: string })[] } };
  const ready = answer.status?.conditions?.find((c) => c.type === 'Ready');
  assert.ok(ready, `a Ready condition in ${JSON.stringify(answer)}`);
  return { status: ready.status, reason: ready.reason, message: ready.message };
}

async function statusOf(url: string, path: string): Promise<number> {
  const res = await fetch(`${url}${path}`);
  await res.arrayBuffer();
  return res.status;
}

/** Connected for real: ready, and a hook's request to wadm reached NATS (which has no responder). */
async function assertReachesNats(running: RunningService): Promise<void> {
  await running.connected();
  assert.equal(await statusOf(running.url, '/readyz'), 200);
  const ready = await syncReady(running.url);
  assert.equal(ready.reason, 'LatticeUnavailable');
  assert.match(ready.message, /\(NoResponders\)/, ready.message);
}

/**
 * Not connected: alive, not ready, and (within NATS_OUTAGE_GRACE, 30 s by default) hook calls are
 * left to a peer with 429 and Retry-After; past the grace it answers LatticeUnavailable
 * (test/lattice/topology.test.ts).
 */
async function assertDisconnectedButServing(running: RunningService): Promise<void> {
  assert.equal(running.service.link.isConnected(), false);
  assert.equal(await statusOf(running.url, '/healthz'), 200);
  assert.equal(await statusOf(running.url, '/readyz'), 503);
  const res = await fetch(`${running.url}/sync`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  assert.equal(res.status, 429);
  assert.equal(res.headers.get('retry-after'), '1');
  assert.match(((await res.json()) as { message: string }).message, /not connected to NATS/);
}

/** Connections the server refused so far: it logs an error line for each (bad credentials, failed TLS handshake). */
function refusals(nats: NatsServer): number {
  return nats
    .output()
    .split('\n')
    .filter((line) => line.includes('[ERR]')).length;
}

function errorLines(logs: Record<string, unknown>[]): Record<string, unknown>[] {
  return logs.filter((line) => typeof line['level'] === 'number' && line['level'] >= 40 && line['component'] === 'nats');
}

/** How many times the log says the connection came up. */
function connections(logs: Record<string, unknown>[]): number {
  return logs.filter((line) => line['msg'] === 'NATS connected' || line['msg'] === 'NATS reconnected').length;
}

function assertNoSecretLogged(logs: Record<string, unknown>[], secrets: string[]): void {
  assert.ok(secrets.length > 0);
  for (const line of logs) {
    const text = JSON.stringify(line);
    for (const secret of secrets) assert.ok(!text.includes(secret), `a secret reached the log: ${text}`);
  }
}

// ---- the tests -----------------------------------------------------------------------------------

// One CA and its certificates for the whole file, made when a TLS mode first needs them.
let shared: { dir: string; pki: Pki } | undefined;
function pki(): Pki {
  if (!shared) {
    const dir = mkdtempSync(join(tmpdir(), 'nats-pki-'));
    shared = { dir, pki: createPki(dir) };
  }
  return shared.pki;
}
after(() => shared && rmSync(shared.dir, { recursive: true, force: true }));

describe('NATS security modes against a real nats-server', () => {
  for (const modeName of Object.keys(MODES)) {
    describe(modeName, () => {
      it('connects, becomes ready, and a hook call reaches NATS, without logging the secret', async (t) => {
        const setup = await setUp(t, modeName, pki);
        const running = await setup.start();
        await assertReachesNats(running);
        assertNoSecretLogged(running.logs, setup.mode.secrets);
      });

      it('with a wrong credential stays up and unready, logs the problem without flooding, and connects once the file is corrected', async (t) => {
        const setup = await setUp(t, modeName, pki);
        setup.mode.spoil();
        const running = await setup.start();
        const first = await until(() => running.logs.find((l) => l['msg'] === CONNECT_ERROR), { what: 'a connect error in the log' });
        const namesProblem = () => assert.match(String(first['err']), setup.mode.problem, `err: ${String(first['err'])}`);
        namesProblem();
        await assertDisconnectedButServing(running);

        // It keeps trying (every 100 ms here) but the log stays quiet: not a flood, not a crash loop. Counted in
        // attempts the server refused, not in time, so a slow machine makes no difference.
        const before = errorLines(running.logs).length;
        const refusedBefore = refusals(setup.nats);
        await until(() => refusals(setup.nats) >= refusedBefore + 3, { what: () => `3 more refused attempts:\n${setup.nats.output()}` });
        const during = errorLines(running.logs).length - before;
        assert.ok(during <= 2, `${during} NATS error lines over 3 attempts: ${JSON.stringify(errorLines(running.logs))}`);
        assert.equal(await statusOf(running.url, '/healthz'), 200);
        assert.equal(await statusOf(running.url, '/readyz'), 503);

        // Fixing the mounted file is enough: no restart (the loop did not give up).
        setup.mode.repair();
        await assertReachesNats(running);
        assertNoSecretLogged(running.logs, setup.mode.secrets);
      });
    });
  }
});

describe('secret rotation on a running service', () => {
  it('reconnects with a rotated token after the server changed it first, without a restart', async (t) => {
    const setup = await setUp(t, 'token', pki);
    const running = await setup.start();
    await assertReachesNats(running);

    const rotated = 'tok-rotated-0e2c4a6b8d';
    writeFileSync(setup.configFile, `authorization { token: "${rotated}" }\n`);
    await setup.nats.restart(); // same port, new token: the old one is refused from now on
    await until(() => !running.service.link.isConnected(), { what: 'the service notices' });
    const refusedBefore = refusals(setup.nats);
    await until(() => refusals(setup.nats) >= refusedBefore + 3, { what: 'reconnect attempts with the old token' });
    await assertDisconnectedButServing(running);

    const refused = await until(() => running.logs.find((l) => l['component'] === 'nats' && /authorization/i.test(String(l['err']))), {
      what: () => `an error line names the refused token: ${JSON.stringify(errorLines(running.logs))}`,
    });
    assert.ok(refused);
    writeFileSync(setup.mode.env['NATS_TOKEN_FILE']!, `${rotated}\n`);
    await assertReachesNats(running);
    assertNoSecretLogged(running.logs, [...setup.mode.secrets, rotated]);
  });

  it('reconnects with a rotated password when the file changes first and the server follows', async (t) => {
    const setup = await setUp(t, 'user and password', pki);
    const running = await setup.start();
    await assertReachesNats(running);

    const rotated = 'pw-rotated-5c7e9a1b3d';
    const connectedBefore = connections(running.logs);
    writeFileSync(setup.mode.env['NATS_PASSWORD_FILE']!, `${rotated}\n`);
    writeFileSync(setup.configFile, `authorization { users: [ { user: metacontroller, password: "${rotated}" } ] }\n`);
    await setup.nats.restart();
    await until(() => connections(running.logs) > connectedBefore, { what: 'a reconnect with the new password' });
    await assertReachesNats(running);
    assertNoSecretLogged(running.logs, [...setup.mode.secrets, rotated]);
  });
});
