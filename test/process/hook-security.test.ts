// Hook authentication, HTTPS with certificate reload, and the in-flight bound: the whole service
// in-process over real HTTP(S). NATS is unreachable here: hooks still answer (LatticeUnavailable).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { wasmApp, hookRequest } from '../support/resources.js';
import { startService } from '../support/service.js';
import { until } from '../support/wait.js';

// No NATS, and no grace (wiring/readiness.ts): a lone replica cut off from NATS answers hooks at once.
const NO_NATS = { NATS_URL: 'nats://127.0.0.1:1', NATS_OUTAGE_GRACE: '0s' };
const body = JSON.stringify(hookRequest(wasmApp().build()));

function post(url: string, headers: Record<string, string> = {}) {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
}

describe('bearer authentication of the hooks', () => {
  it('answers 401 with a JSON error without the right token, 200 with it, and keeps probes and metrics open', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'token-'));
    writeFileSync(join(dir, 'token'), 's3cret-token\n');
    const { url } = await startService(t, { ...NO_NATS, HOOK_BEARER_TOKEN_FILE: join(dir, 'token') });
    for (const headers of <Record<string, string>[]>[
      {},
      { authorization: 'Bearer wrong' },
      { authorization: 's3cret-token' },
      { authorization: 'Basic s3cret-token' },
    ]) {
      const res = await post(`${url}/sync`, headers);
      assert.equal(res.status, 401, JSON.stringify(headers));
      assert.equal(res.headers.get('www-authenticate'), 'Bearer');
      assert.deepEqual(await res.json(), { error: 'Unauthorized', message: 'missing or wrong bearer token' });
    }
    assert.equal((await post(`${url}/sync`, { authorization: 'Bearer s3cret-token' })).status, 200);
    assert.equal((await post(`${url}/finalize`, {})).status, 401);
    for (const path of ['/healthz', '/readyz', '/metrics']) assert.notEqual((await fetch(`${url}${path}`)).status, 401, path);
  });

  it('takes a rotated token without a restart', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'token-'));
    const file = join(dir, 'token');
    writeFileSync(file, 'first');
    const { url, logs } = await startService(t, { ...NO_NATS, HOOK_BEARER_TOKEN_FILE: file }, { fileCheckIntervalMs: 50 });
    assert.equal((await post(`${url}/sync`, { authorization: 'Bearer first' })).status, 200);
    writeFileSync(file, 'second-token');
    await until(async () => (await post(`${url}/sync`, { authorization: 'Bearer second-token' })).status === 200);
    assert.equal((await post(`${url}/sync`, { authorization: 'Bearer first' })).status, 401);
    assert.ok(!JSON.stringify(logs).includes('second-token'), 'the token never reaches a log line');
  });
});

describe('HTTPS', () => {
  function certificate(dir: string, name: string) {
    const cert = join(dir, `${name}.crt`);
    const key = join(dir, `${name}.key`);
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        `/CN=${name}`,
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        key,
        '-out',
        cert,
      ],
      { stdio: 'ignore' },
    );
    return { cert, key };
  }

  function peer(url: string, ca: string): Promise<{ status: number; subject: string }> {
    return new Promise((resolve, reject) => {
      const req = request(`${url}/healthz`, { ca, agent: false }, (res) => {
        const subject = (res.socket as TLSSocket).getPeerCertificate().subject.CN;
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, subject: String(subject) }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  it('serves HTTPS and reloads a renewed certificate without a restart', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'tls-'));
    const first = certificate(dir, 'first');
    const second = certificate(dir, 'second');
    const live = { cert: join(dir, 'tls.crt'), key: join(dir, 'tls.key') };
    writeFileSync(live.cert, readFileSync(first.cert));
    writeFileSync(live.key, readFileSync(first.key));
    const { url } = await startService(t, { ...NO_NATS, TLS_CERT_FILE: live.cert, TLS_KEY_FILE: live.key }, { fileCheckIntervalMs: 50 });
    assert.match(url, /^https:/);
    const ca = readFileSync(first.cert, 'utf8') + readFileSync(second.cert, 'utf8');
    assert.deepEqual(await peer(url, ca), { status: 200, subject: 'first' });
    writeFileSync(live.key, readFileSync(second.key));
    writeFileSync(live.cert, readFileSync(second.cert));
    await until(async () => (await peer(url, ca).catch(() => ({ subject: '' }))).subject === 'second');
  });
});
