// `diff` and `list` through the real binary entry, against a real nats-server and the real wadm:
// what they print must be what wadm holds, so wadm itself is asked, not a double.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import yaml from 'js-yaml';
import { connect, type NatsConnection } from 'nats';
import { WadmClient } from '../../src/lattice/wadm-client.js';
import { renderManifest } from '../../src/core/manifest.js';
import { check, readAll } from '../../src/cli/commands.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { startWadm, type WadmProcess } from '../support/wadm.js';
import { fixtureText } from '../support/fixtures.js';

const ROOT = resolve(import.meta.dirname, '../..');
const HELLO = 'examples/apps/hello-world.yaml';
const dir = mkdtempSync(join(tmpdir(), 'cli-lattice-'));
let nats: NatsServer;
let wadm: WadmProcess;
let nc: NatsConnection;
let client: WadmClient;

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', resolve(ROOT, 'src/main.ts'), ...args], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'warn', NATS_URL: nats.url },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/** Puts and deploys what the hook would for this file, as the hook does. */
async function apply(file: string): Promise<string> {
  const checked = check(readAll(file)[0]!, { namespace: 'default', defaultLattice: 'default' });
  assert.ok(checked.ok);
  const rendered = renderManifest(checked.validation.app);
  assert.equal((await client.put('default', rendered.body)).kind, 'created');
  assert.equal((await client.deploy('default', rendered.manifest.metadata.name, rendered.version)).kind, 'done');
  return rendered.version;
}

before(async () => {
  nats = await startNatsServer();
  wadm = await startWadm(nats.url);
  nc = await connect({ servers: nats.url });
  client = new WadmClient({ connection: () => nc, apiPrefix: 'wadm.api', timeoutMs: 5000 });
  // wadm answers once it has subscribed; wait for that state, not for a time.
  for (;;) {
    try {
      await client.list('default');
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
});

after(async () => {
  await nc?.close();
  await wadm?.stop();
  await nats?.stop();
});

describe('diff and list against the real wadm', () => {
  it('lists an empty lattice as a header only', async () => {
    const { code, stdout } = await cli(['list', '--lattice', 'default']);
    assert.equal(code, 0);
    assert.equal(stdout, 'NAME   DEPLOYED   LATEST   OWNER\n');
  });

  it('diffs against nothing before a deploy, shows nothing after it, and shows an edit', async () => {
    const before = await cli(['diff', HELLO]);
    assert.equal(before.code, 1, before.stderr);
    const lines = before.stdout.split('\n');
    assert.equal(lines[0], '--- /dev/null');
    assert.match(lines[1]!, /^\+\+\+ examples\/apps\/hello-world\.yaml sha-[0-9a-f]{16}$/);
    assert.match(lines[2]!, /^@@ -0,0 \+1,\d+ @@$/);
    assert.ok(
      lines
        .slice(3)
        .filter(Boolean)
        .every((l) => l.startsWith('+')),
    );

    const version = await apply(HELLO);
    const same = await cli(['diff', HELLO]);
    assert.deepEqual(same, { code: 0, stdout: '', stderr: '' });

    const edited = join(dir, 'hello-edited.yaml');
    writeFileSync(edited, readFileSync(resolve(ROOT, HELLO), 'utf8').replace('instances: 1', 'instances: 3'));
    const changed = await cli(['diff', edited]);
    assert.equal(changed.code, 1, changed.stderr);
    assert.equal(changed.stdout.split('\n')[0], `--- wadm default/hello-world ${version}`);
    const changes = changed.stdout
      .split('\n')
      .slice(2)
      .filter((l) => l.startsWith('-') || l.startsWith('+'));
    // The content changed, and so did the hash and version annotations derived from it; nothing else.
    const shown = changes.map(
      (l) =>
        l[0] +
        l
          .slice(1)
          .trim()
          .replace(/sha-[0-9a-f]{16}/, 'sha-…')
          .replace(/[0-9a-f]{64}/, '…'),
    );
    assert.deepEqual(shown, [
      '-core.wasmcloud.com/content-hash: …',
      '+core.wasmcloud.com/content-hash: …',
      '-version: sha-…',
      '+version: sha-…',
      '-instances: 1',
      '+instances: 3',
    ]);
  });

  it('lists models with their deployed version and owner, or unowned', async () => {
    const unowned = yaml.load(fixtureText('complex.yaml')) as { metadata: { name: string } };
    assert.equal((await client.put('default', JSON.stringify(unowned))).kind, 'created');
    const versions = await client.versions('default', 'hello-world');
    const deployed = versions!.find((v) => v.deployed)!.version;
    const { code, stdout } = await cli(['list']);
    assert.equal(code, 0);
    const rows = stdout
      .trim()
      .split('\n')
      .map((l) => l.split(/\s{3,}/));
    assert.deepEqual(rows[0], ['NAME', 'DEPLOYED', 'LATEST', 'OWNER']);
    const byName = new Map(rows.slice(1).map((r) => [r[0], r]));
    assert.deepEqual(byName.get('hello-world'), ['hello-world', deployed, deployed, 'default/hello-world']);
    assert.deepEqual(byName.get(unowned.metadata.name)!.slice(1, 2).concat(byName.get(unowned.metadata.name)!.slice(3)), ['-', 'unowned']);
    assert.equal(rows.length, 3);
  });
});
