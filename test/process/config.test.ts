import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { defaultHookBytesInFlight } from '../../src/wiring/build.js';
import { loadConfig } from '../../src/plumbing/config.js';
import { freePort } from '../support/ports.js';

// The two ways the service starts: `npm start` runs dist/main.js without arguments; the image runs
// it with its default command, serve. Both must start, fail and stop alike.
const MAIN = resolve(import.meta.dirname, '../../src/main.ts');
const ENTRIES = { main: [MAIN], 'main serve': [MAIN, 'serve'] };

describe('configuration', () => {
  it('has the documented defaults', () => {
    const result = loadConfig({});
    assert.ok(result.ok);
    assert.deepEqual(result.config, {
      port: 8080,
      host: '0.0.0.0',
      natsServers: ['nats://127.0.0.1:4222'],
      defaultLattice: 'default',
      wadmApiPrefix: 'wadm.api',
      wadmTimeoutMs: 4500,
      hookTimeoutMs: 10_000,
      natsOutageGraceMs: 30_000,
      peers: [],
      logLevel: 'info',
      logFormat: undefined,
      bodyLimitBytes: 16 * 1024 * 1024,
      natsCredsFile: undefined,
      natsNkeySeedFile: undefined,
      natsUser: undefined,
      natsPasswordFile: undefined,
      natsTokenFile: undefined,
      natsTlsCaFile: undefined,
      natsTlsCertFile: undefined,
      natsTlsKeyFile: undefined,
      hookBearerTokenFile: undefined,
      tlsCertFile: undefined,
      tlsKeyFile: undefined,
      latticePolicyFile: undefined,
      latticePolicyStrict: false,
      maxConcurrentHooks: 64,
      hookBytesInFlight: undefined,
      shutdownDelayMs: 3000,
      modelCacheTtlSeconds: 300,
      cacheEntries: 20000,
    });
  });

  it('refuses two NATS authentications at once, and halves of a pair', () => {
    const result = loadConfig({ NATS_CREDS_FILE: '/a', NATS_TOKEN_FILE: '/b', NATS_USER: 'u', NATS_TLS_CERT_FILE: '/c' });
    assert.ok(!result.ok);
    assert.deepEqual(result.errors, [
      'NATS_CREDS_FILE and NATS_USER and NATS_TOKEN_FILE are exclusive: choose one NATS authentication',
      'NATS_USER and NATS_PASSWORD_FILE go together',
      'NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE go together',
    ]);
  });

  it('accepts a comma-separated list of NATS servers', () => {
    const result = loadConfig({ NATS_URL: 'nats://a:4222, tls://b:4222,c:4222' });
    assert.ok(result.ok);
    assert.deepEqual(result.config.natsServers, ['nats://a:4222', 'tls://b:4222', 'c:4222']);
  });

  it("bounds hook bodies in flight by HOOK_BYTES_IN_FLIGHT, else by an eighth of V8's heap limit", () => {
    const set = loadConfig({ HOOK_BYTES_IN_FLIGHT: String(64 * 2 ** 20) });
    assert.ok(set.ok);
    assert.equal(set.config.hookBytesInFlight, 64 * 2 ** 20);
    const tooSmall = loadConfig({ HOOK_BYTES_IN_FLIGHT: '4096' });
    assert.ok(!tooSmall.ok);
    assert.match(tooSmall.errors[0]!, /^HOOK_BYTES_IN_FLIGHT must be an integer from 1048576/);
    // Under the Deployment's 512Mi, Node gives V8 a 259 MiB heap: two 16 MiB bodies at once, not four.
    assert.equal(defaultHookBytesInFlight(259 * 2 ** 20), 259 * 2 ** 17);
    assert.ok(defaultHookBytesInFlight() >= 2 ** 20);
  });

  it('reports every bad variable at once, each by name', () => {
    const result = loadConfig({
      PORT: 'http',
      NATS_URL: 'http://x',
      DEFAULT_LATTICE: 'a.b',
      WADM_API_PREFIX: 'wadm.*',
      WADM_TIMEOUT_MS: '20000',
      LOG_LEVEL: 'loud',
    });
    assert.ok(!result.ok);
    assert.deepEqual(
      result.errors.map((e) => e.split(' ')[0]),
      ['PORT', 'NATS_URL', 'DEFAULT_LATTICE', 'WADM_API_PREFIX', 'WADM_TIMEOUT_MS', 'LOG_LEVEL'],
    );
    assert.match(result.errors[4]!, /WADM_TIMEOUT_MS must be an integer from 100 to 8000, got "20000"/);
  });
});

for (const [entry, argv] of Object.entries(ENTRIES)) {
  describe(`the process started as ${entry}`, () => {
    function start(env: Record<string, string>) {
      const child = spawn(process.execPath, ['--import', 'tsx', ...argv], {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
      return { child, exited, output: () => ({ stdout, stderr }) };
    }

    it('exits 1 at start with one line naming the bad variable', async () => {
      const proc = start({ WADM_TIMEOUT_MS: 'soon' });
      assert.equal(await proc.exited, 1);
      const lines = proc.output().stderr.trim().split('\n');
      assert.equal(lines.length, 1);
      assert.match(lines[0]!, /^wasmcloud-metacontroller: invalid configuration: WADM_TIMEOUT_MS must be an integer/);
    });

    it('exits 1 with one line when its port is taken', async (t) => {
      const taken = createServer();
      await new Promise<void>((done) => taken.listen(0, '127.0.0.1', done));
      t.after(() => taken.close());
      const port = (taken.address() as { port: number }).port;
      const proc = start({ PORT: String(port), HOST: '127.0.0.1', NATS_URL: 'nats://127.0.0.1:1' });
      t.after(() => proc.child.kill('SIGKILL'));
      assert.equal(await proc.exited, 1);
      const lines = proc.output().stderr.trim().split('\n');
      assert.deepEqual(lines.length, 1, proc.output().stderr);
      assert.match(lines[0]!, new RegExp(`^wasmcloud-metacontroller: cannot listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`));
    });

    it('starts and answers /healthz while NATS is down, is not ready, and exits 0 on SIGTERM', async (t) => {
      const port = await freePort();
      const proc = start({ PORT: String(port), HOST: '127.0.0.1', NATS_URL: 'nats://127.0.0.1:1' });
      t.after(() => proc.child.kill('SIGKILL'));
      // Wait for the process to say it listens, not for a deadline: a loaded machine starts slowly.
      await until(() => proc.output().stdout.includes('Server listening'));
      assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
      assert.equal((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 503);
      proc.child.kill('SIGTERM');
      assert.equal(await proc.exited, 0);
      assert.match(proc.output().stdout, /cannot connect to NATS; retrying/);
    });

    it('exits at once with 130 on a second SIGINT while the first one drains', async (t) => {
      const port = await freePort();
      // A drain that would outlast the test: only the second signal can end the process.
      const proc = start({ PORT: String(port), HOST: '127.0.0.1', NATS_URL: 'nats://127.0.0.1:1', SHUTDOWN_DELAY_MS: '60000' });
      t.after(() => proc.child.kill('SIGKILL'));
      await until(() => proc.output().stdout.includes('Server listening'));
      proc.child.kill('SIGINT');
      await until(() => proc.output().stdout.includes('shutting down'));
      assert.equal((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 503, 'readiness is off during the drain');
      proc.child.kill('SIGINT');
      assert.equal(await proc.exited, 130);
      assert.match(proc.output().stdout, /second signal: exiting at once/);
    });
  });
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 50));
}
