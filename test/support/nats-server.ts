// Real nats-server processes for tests (the one scripts/test-deps.sh pinned): a free port, a fresh JetStream store,
// readiness awaited, and stop/restart on the same port and store (tests kill NATS mid-scenario).
import { mkdtempSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';
import { freePort } from './ports.js';
import { binaryFrom, removedAtExit, startProcess, untilReady, type ServerProcess } from './processes.js';

const START_TIMEOUT_MS = 10_000;

export interface NatsServerOptions {
  /** `-js` with a store in a fresh temp dir (default true). */
  jetstream?: boolean;
  /** Appended after our own flags. */
  extraArgs?: string[];
  /** Passed with `-c`; our `-a`/`-p`/`-sd` flags override the file. */
  configFile?: string;
}

export interface NatsServer {
  readonly url: string;
  readonly port: number;
  /** Resolves once the process has exited. Idempotent. */
  stop(): Promise<void>;
  /** Starts again on the same port and store dir (stopping first if running). */
  restart(): Promise<void>;
  /** stop() and delete the store dir. */
  dispose(): Promise<void>;
  /** The log of the current process (since the last restart). */
  output(): string;
}

export async function startNatsServer(options: NatsServerOptions = {}): Promise<NatsServer> {
  const binary = binaryFrom('NATS_SERVER_BIN');
  const storeDir = mkdtempSync(join(tmpdir(), 'nats-test-'));
  const removeStore = removedAtExit(storeDir);
  const { jetstream = true, extraArgs = [], configFile } = options;
  // A port picked by the OS may be taken again before nats-server binds it: try a few.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const url = `nats://127.0.0.1:${port}`;
    const args = [
      ...(configFile ? ['-c', configFile] : []),
      '-a',
      '127.0.0.1',
      '-p',
      String(port),
      ...(jetstream ? ['-js', '-sd', storeDir] : []),
      ...extraArgs,
    ];
    const launch = async (): Promise<ServerProcess> => {
      const process = startProcess('nats-server', binary, args);
      try {
        await untilReady(process, jetstream ? () => jetStreamReady(url) : () => portOpen(port), START_TIMEOUT_MS);
        return process;
      } catch (error) {
        await process.stop();
        throw new Error(`${(error as Error).message}\n(command: ${binary} ${args.join(' ')})`);
      }
    };
    try {
      let current = await launch();
      return {
        url,
        port,
        stop: () => current.stop(),
        async restart() {
          await current.stop();
          current = await launch();
        },
        async dispose() {
          await current.stop();
          removeStore();
        },
        output: () => current.output(),
      };
    } catch (error) {
      if (!/address already in use/i.test(String(error)) || attempt === 5) {
        removeStore();
        throw error;
      }
    }
  }
}

/** With JetStream, "ready" means a client can connect and reach the JetStream API. */
async function jetStreamReady(url: string): Promise<boolean> {
  if (!(await portOpen(Number(new URL(url).port)))) return false;
  const nc = await connect({ servers: url, reconnect: false, timeout: 1_000 });
  try {
    await nc.jetstreamManager({ timeout: 1_000 }); // fetches the account info: fails until JetStream is up
    return true;
  } finally {
    await nc.close();
  }
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
