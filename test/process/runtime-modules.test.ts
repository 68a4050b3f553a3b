// The node_modules the image ships (scripts/runtime-modules.mjs): only what the bundle loads from
// files at run time, and enough for it — the built service runs from such a layout, pretty logs
// (pino-pretty in pino's worker thread) included.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { copyRuntimeModules, runtimeClosure } from '../../scripts/runtime-modules.mjs';
import { freePort } from '../support/ports.js';
import { until } from '../support/wait.js';

const ROOT = resolve(import.meta.dirname, '../..');
const scratch = mkdtempSync(join(tmpdir(), 'wcm-runtime-modules-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const closure = () => runtimeClosure(ROOT);

describe('the node_modules the image ships', () => {
  it('are pino and pino-pretty with what they depend on, each where Node finds it', () => {
    const dirs = closure();
    for (const name of ['pino', 'pino-pretty', 'thread-stream', 'sonic-boom', 'pino-abstract-transport'])
      assert.ok(dirs.includes(`node_modules/${name}`), name);
    assert.ok(dirs.every((dir) => dir.startsWith('node_modules/')));
  });

  it('leave out the libraries the bundle carries', () => {
    const dirs = closure();
    for (const name of ['fastify', 'nats', '@sinclair/typebox', 'prom-client', 'js-yaml', 'ajv'])
      assert.ok(!dirs.includes(`node_modules/${name}`), name);
  });

  it('name a package that is not installed', () => {
    assert.throws(() => runtimeClosure(ROOT, ['no-such-package-here']), /no-such-package-here, needed by the service, is not installed/);
  });

  it('are enough for the built service, which logs human-readable lines through pino-pretty', async () => {
    const app = join(scratch, 'app');
    const build = spawnSync(process.execPath, [resolve(ROOT, 'scripts/build.mjs'), join(app, 'dist/main.js')], { encoding: 'utf8' });
    assert.equal(build.status, 0, build.stdout + build.stderr);
    copyFileSync(resolve(ROOT, 'package.json'), join(app, 'package.json'));
    copyRuntimeModules(ROOT, app);
    assert.equal(existsSync(join(app, 'node_modules/fastify')), false);

    // No NATS at this address: the service starts anyway and logs.
    const child = spawn(process.execPath, ['dist/main.js'], {
      cwd: app,
      env: {
        ...process.env,
        NATS_URL: 'nats://127.0.0.1:1',
        PORT: String(await freePort()),
        HOST: '127.0.0.1',
        LOG_FORMAT: 'pretty',
        SHUTDOWN_DELAY_MS: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const exited = new Promise<number | null>((done) => child.on('exit', done));
    try {
      await until(
        () => {
          if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}: ${err}`);
          return out.includes('starting wasmcloud-metacontroller');
        },
        { what: () => `a pretty first line:\n${out}\n${err}`, timeoutMs: 60_000 },
      );
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    const first = out.split('\n').find((line) => line.includes('starting wasmcloud-metacontroller'))!;
    assert.throws(() => JSON.parse(first), 'a pretty line, not JSON');
    assert.match(first, /INFO/);
  });
});
