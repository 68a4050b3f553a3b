// The native-process support (test/support/processes.ts) through its main user, nats-server: readiness, restart on
// the same port and store, a stop that waits, errors that show the log, and no leftover after a test run ends.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { connect, ErrorCode, type NatsConnection, type NatsError } from 'nats';
import { startNatsServer } from '../support/nats-server.js';
import { binaryFrom } from '../support/processes.js';
import { until } from '../support/wait.js';

const SUPPORT = fileURLToPath(new URL('../support/nats-server.ts', import.meta.url));

/** Whether a server answers at `url` now (this very one, when its id is given: the port may be taken again). */
const answers = (url: string, serverId?: string): Promise<boolean> =>
  connect({ servers: url, reconnect: false }).then(
    (nc) => nc.close().then(() => serverId === undefined || nc.info?.server_id === serverId),
    () => false,
  );

async function nextStatus(nc: NatsConnection, type: string): Promise<void> {
  for await (const status of nc.status()) if (status.type === type) return;
}

/** A child node process that starts a server and prints its URL and id, then exits on its own or is sent SIGTERM. */
function childWithServer(ending: 'exit' | 'sigterm'): Promise<{ url: string; id: string; code: number | null; signal: string | null }> {
  const script = `
    const { startNatsServer } = await import(${JSON.stringify(SUPPORT)});
    const { connect } = await import('nats');
    const { url } = await startNatsServer();
    const nc = await connect({ servers: url });
    console.log(url, nc.info.server_id);
    await nc.close();
    ${ending === 'exit' ? 'process.exit(0);' : 'setInterval(() => {}, 1000);'}`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (ending === 'sigterm' && out.includes('\n')) child.kill('SIGTERM');
  });
  return new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      const [url = '', id = ''] = out.trim().split(' ');
      resolve({ url, id, code, signal });
    }),
  );
}

describe('nats-server for tests', () => {
  it('starts with JetStream on a free local port, or without it when asked', async (t) => {
    const [js, plain] = [await startNatsServer(), await startNatsServer({ jetstream: false })];
    t.after(() => Promise.all([js.dispose(), plain.dispose()]));
    assert.match(js.url, /^nats:\/\/127\.0\.0\.1:\d+$/);
    const [a, b] = [await connect({ servers: js.url }), await connect({ servers: plain.url })];
    assert.equal(typeof (await (await a.jetstreamManager()).getAccountInfo()).streams, 'number');
    await assert.rejects(b.jetstreamManager(), (e: NatsError) => e.code === ErrorCode.JetStreamNotEnabled);
    await Promise.all([a.close(), b.close()]);
  });

  it('stops for good, idempotently, and restarts on the same port with the same JetStream store', async (t) => {
    const server = await startNatsServer();
    t.after(() => server.dispose());
    const nc = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 50 });
    t.after(() => nc.close());
    await (await nc.jetstreamManager()).streams.add({ name: 'KEEP', subjects: ['keep.>'] });

    const reconnected = nextStatus(nc, 'reconnect');
    await server.stop();
    await server.stop();
    assert.equal(await answers(server.url), false, 'stop resolves once the server is gone');
    await server.restart();
    // A request made while the client is still reconnecting can time out: wait for the client.
    await reconnected;
    assert.equal((await (await nc.jetstreamManager()).streams.info('KEEP')).config.name, 'KEEP');
  });

  it('a failed start reports the command and the server output', async () => {
    await assert.rejects(
      startNatsServer({ extraArgs: ['--no-such-flag'] }),
      /nats-server exited[\s\S]*flag provided but not defined[\s\S]*--no-such-flag/,
    );
  });

  for (const ending of ['exit', 'sigterm'] as const) {
    it(`a test process that ends with ${ending} leaves no nats-server behind`, async () => {
      const run = await childWithServer(ending);
      assert.deepEqual([run.code, run.signal], ending === 'exit' ? [0, null] : [null, 'SIGTERM']);
      assert.match(run.url, /^nats:/);
      await until(async () => !(await answers(run.url, run.id)), { what: 'the server is gone' });
    });
  }

  it('binaries come from the variables scripts/test-deps.sh writes, and a missing one says so', () => {
    assert.equal(binaryFrom('NATS_SERVER_BIN'), process.env['NATS_SERVER_BIN']);
    assert.throws(() => binaryFrom('NATS_SERVER_BIN', {}), /NATS_SERVER_BIN is not set: run `bash scripts\/test-deps\.sh`/);
    assert.throws(() => binaryFrom('NATS_SERVER_BIN', { NATS_SERVER_BIN: '/nonexistent' }), /not an executable file/);
  });
});
