import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { connect, ErrorCode, type NatsConnection, type NatsError } from 'nats';
import { natsServerBinary, startNatsServer, withNatsServer } from './support/nats-server.js';
import { until } from './support/wait.js';

const SUPPORT = fileURLToPath(new URL('./support/nats-server.ts', import.meta.url));

/** A zombie (dead, waiting to be reaped by an adopting init) counts as gone. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (!existsSync('/proc/self/stat')) return true; // no procfs: trust kill(0)
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false; // exited in between
  }
}

async function nextStatus(nc: NatsConnection, type: string): Promise<void> {
  for await (const status of nc.status()) if (status.type === type) return;
}

/**
 * A child node process that starts a server and prints its pid; then it either exits on its own
 * (`process.exit`) or idles until we SIGTERM it.
 */
function childWithServer(ending: 'exit' | 'sigterm'): Promise<{ pid: number; code: number | null; signal: string | null }> {
  const script = `
    const { startNatsServer } = await import(${JSON.stringify(SUPPORT)});
    const server = await startNatsServer();
    console.log(server.pid);
    ${ending === 'exit' ? 'process.exit(0);' : 'setInterval(() => {}, 1000);'}`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (ending === 'sigterm' && out.includes('\n')) child.kill('SIGTERM');
  });
  return new Promise((resolve) => {
    child.on('exit', (code, signal) => resolve({ pid: Number(out.trim()), code, signal }));
  });
}

describe('nats-server for tests', () => {
  it('starts a server with JetStream on a free local port', async (t) => {
    const server = await withNatsServer(t);
    assert.match(server.url, /^nats:\/\/127\.0\.0\.1:\d+$/);
    const nc = await connect({ servers: server.url });
    const info = await (await nc.jetstreamManager()).getAccountInfo();
    assert.equal(typeof info.streams, 'number');
    await nc.close();
  });

  it('starts a server without JetStream when asked', async (t) => {
    const server = await withNatsServer(t, { jetstream: false });
    const nc = await connect({ servers: server.url });
    await assert.rejects(nc.jetstreamManager(), (e: NatsError) => e.code === ErrorCode.JetStreamNotEnabled);
    await nc.close();
  });

  it('restarts on the same port with the same JetStream store', async (t) => {
    const server = await withNatsServer(t);
    const firstPid = server.pid;
    const nc = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 50 });
    t.after(() => nc.close());
    await (await nc.jetstreamManager()).streams.add({ name: 'KEEP', subjects: ['keep.>'] });

    const reconnected = nextStatus(nc, 'reconnect');
    await server.stop();
    assert.equal(server.pid, undefined);
    assert.equal(alive(firstPid ?? 0), false);
    await server.restart();
    // A request made while the client is still reconnecting can time out: wait for the client.
    await reconnected;

    assert.notEqual(server.pid, firstPid);
    const info = await (await nc.jetstreamManager()).streams.info('KEEP');
    assert.equal(info.config.name, 'KEEP');
  });

  it('stop is idempotent and waits for the process to exit', async () => {
    const server = await startNatsServer({ jetstream: false });
    const pid = server.pid ?? 0;
    await server.stop();
    await server.stop();
    assert.equal(alive(pid), false);
    await server.dispose();
  });

  it('a failed start reports the command and the tail of the server output', async () => {
    await assert.rejects(startNatsServer({ extraArgs: ['--no-such-flag'] }), (e: Error) => {
      assert.match(e.message, /nats-server exited during startup/);
      assert.match(e.message, /flag provided but not defined/); // the head of a long usage text
      return true;
    });
  });

  it('a test process that exits without stopping its server leaves no nats-server behind', async () => {
    const run = await childWithServer('exit');
    assert.equal(run.code, 0);
    await until(() => !alive(run.pid), { what: 'the process is gone' });
  });

  it('a test process killed with SIGTERM leaves no nats-server behind', async () => {
    const run = await childWithServer('sigterm');
    assert.equal(run.signal, 'SIGTERM');
    await until(() => !alive(run.pid), { what: 'the process is gone' });
  });

  it('the binary comes from NATS_SERVER_BIN first', () => {
    const real = natsServerBinary();
    assert.equal(natsServerBinary({ NATS_SERVER_BIN: real, PATH: '' }, '/nonexistent'), real);
    assert.throws(() => natsServerBinary({ NATS_SERVER_BIN: '/nonexistent/nats-server' }), /NATS_SERVER_BIN/);
  });

  it('a missing binary points at scripts/test-deps.sh', () => {
    assert.throws(() => natsServerBinary({ PATH: '' }, '/nonexistent'), /bash scripts\/test-deps\.sh/);
  });
});
