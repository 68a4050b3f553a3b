// `hosts` through the real binary entry, against a real nats-server and simulated hosts (no wadm:
// it asks none): the command of docs/lattice.md as written, what it prints for an empty lattice,
// and its exit code when NATS refuses the heartbeat subjects or cannot be reached.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { markedBlock, runBlock, substituted } from '../support/doc-blocks.js';
import { startLattice, type SimulatedLattice } from '../support/host-sim.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { freePort } from '../support/ports.js';

const ROOT = resolve(import.meta.dirname, '../..');
const PASSWORD = 'narrow-pw-5e1a9c';
const dir = mkdtempSync(join(tmpdir(), 'cli-hosts-'));
let nats: NatsServer;
let sim: SimulatedLattice;

before(async () => {
  // `narrow` may not hear any host's heartbeats; the hosts and everyone else connect without credentials.
  const configFile = join(dir, 'nats-server.conf');
  writeFileSync(
    configFile,
    `authorization {\n  users = [\n    { user: admin, password: "admin-pw-1b2c3d" }\n    { user: narrow, password: "${PASSWORD}", permissions { subscribe { allow: ["_INBOX.>"] } } }\n  ]\n}\nno_auth_user: admin\n`,
  );
  writeFileSync(join(dir, 'password'), `${PASSWORD}\n`, { mode: 0o600 });
  nats = await startNatsServer({ configFile });
  sim = await startLattice({
    servers: nats.url,
    lattice: 'default',
    hosts: [{ labels: { zone: 'eu' } }, { labels: { zone: 'us' } }],
    heartbeatMs: 500,
  });
  // The command as a user runs it: `wasmcloud-metacontroller` on the PATH.
  writeFileSync(
    join(dir, 'wasmcloud-metacontroller'),
    `#!/bin/sh\nexec "${process.execPath}" --import tsx "${resolve(ROOT, 'src/main.ts')}" "$@"\n`,
  );
  chmodSync(join(dir, 'wasmcloud-metacontroller'), 0o755);
});
after(async () => {
  await sim?.stop();
  await nats?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', resolve(ROOT, 'src/main.ts'), ...args], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'warn', NATS_URL: nats.url, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/** The lines printed after `$ <command>` in a console block of docs/lattice.md, split into cells. */
function pageTable(command: string): string[][] {
  const lines = readFileSync(resolve(ROOT, 'docs/lattice.md'), 'utf8').split('\n');
  const start = lines.indexOf(`$ ${command}`);
  assert.ok(start !== -1, `docs/lattice.md shows \`${command}\``);
  return lines.slice(start + 1, lines.indexOf('```', start)).map((line) => line.trim().split(/\s{2,}/));
}

describe('wasmcloud-metacontroller hosts', () => {
  it('prints the hosts of the lattice with their labels, as docs/lattice.md shows', async () => {
    const block = substituted(markedBlock('docs/lattice.md', 'lattice-hosts-cli'), [
      {
        from: '--lattice default',
        to: '--lattice default --listen 2',
        why: 'the simulated hosts heartbeat every 500 ms: two seconds hear them all',
      },
    ]);
    const { code, stdout, output } = await runBlock(block, {
      cwd: ROOT,
      env: { NATS_URL: nats.url, LOG_LEVEL: 'warn', PATH: `${dir}:${process.env['PATH']}` },
    }).done;
    assert.equal(code, 0, output);
    const printed = stdout
      .trim()
      .split('\n')
      .map((line) => line.trim().split(/\s{2,}/));
    const shown = pageTable('wasmcloud-metacontroller hosts --lattice default');
    assert.deepEqual(printed[0], shown[0], 'the columns');
    // Ids and uptimes are each run's own; names, versions, what they run and labels are the page's.
    const stable = (row: string[]) => [row[0], row[2], row[4], row[5], row[6]];
    assert.deepEqual(printed.slice(1).map(stable), shown.slice(1).map(stable));
    assert.deepEqual(
      printed.slice(1).map((row) => row[1]),
      sim.hosts.map((h) => h.id),
    );
  });

  it('exits 1 when no host of the lattice heartbeats', async () => {
    const { code, stdout, stderr } = await cli(['hosts', '--lattice', 'empty', '--listen', '1']);
    assert.deepEqual([code, stdout, stderr], [1, '', 'no host of lattice "empty" heartbeat within 1 s\n']);
  });

  it('exits 2 when NATS refuses the heartbeat subjects, naming what to grant', async () => {
    const { code, stderr } = await cli(['hosts', '--listen', '1'], { NATS_USER: 'narrow', NATS_PASSWORD_FILE: join(dir, 'password') });
    assert.equal(code, 2);
    assert.match(
      stderr,
      /^cannot hear the hosts of lattice "default": NATS refused this service's user to subscribe to "wasmbus\.evt\.default\.host_\w+"/,
    );
  });

  it('exits 2 when NATS cannot be reached, as the other commands that use NATS do', async () => {
    const { code, stderr } = await cli(['hosts', '--listen', '1'], { NATS_URL: `nats://127.0.0.1:${await freePort()}` });
    assert.equal(code, 2);
    assert.match(stderr, /^cannot connect to NATS at /);
  });
});
