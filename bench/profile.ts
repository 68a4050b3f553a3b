// BENCH_ONLY=profile: where ours spends more per settled call than the ceiling. Both servers run
// under `node --cpu-prof`, each gets the same REQUESTS calls (ours on an application it has
// settled, plain; BENCH_PROFILE_BODY=large: the 1.3 MiB body), and bench/profile-diff.mjs compares
// the two profiles per request.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { startNatsServer } from '../test/support/nats-server.js';
import { appRequest, withLargeManagedFields } from './bodies.js';
import { startLoadWadm } from './load-wadm.js';
import { CEILING_NODE_ARGS, OURS_NODE_ARGS, OURS_ENV, serve, settle, type Pinning } from './processes.js';

const LARGE = process.env['BENCH_PROFILE_BODY'] === 'large';
const REQUESTS = Number(process.env['BENCH_PROFILE_REQUESTS'] ?? (LARGE ? 1_000 : 100_000));

export async function profileSettled(pin: Pinning) {
  const nats = await startNatsServer({ jetstream: false });
  const wadm = await startLoadWadm({ servers: nats.url, hosts: true });
  const dirs = { ceiling: mkdtempSync(join(tmpdir(), 'bench-profile-ceiling-')), ours: mkdtempSync(join(tmpdir(), 'bench-profile-ours-')) };
  try {
    const ours = await serve('dist/main.js', { env: { ...OURS_ENV, NATS_URL: nats.url }, pin, nodeArgs: [...OURS_NODE_ARGS, '--cpu-prof', `--cpu-prof-dir=${dirs.ours}`] });
    const body = await settle(ours.url, LARGE ? withLargeManagedFields(appRequest(1)) : appRequest(0));
    await calls(ours.url, body);
    await ours.stop();
    const ceiling = await serve('bench/ceiling-server.mjs', { pin, nodeArgs: [...CEILING_NODE_ARGS, '--cpu-prof', `--cpu-prof-dir=${dirs.ceiling}`] });
    await calls(ceiling.url, body);
    await ceiling.stop();
  } finally {
    await wadm.stop();
    await nats.dispose();
  }
  const [ceiling, ours] = [dirs.ceiling, dirs.ours].map((dir) => join(dir, readdirSync(dir)[0]!));
  const diff = execFileSync(process.execPath, [resolve(import.meta.dirname, 'profile-diff.mjs'), ceiling!, ours!, String(REQUESTS)], { encoding: 'utf8' });
  console.log(`\nCPU profiles of ${REQUESTS} settled ${LARGE ? 'large' : 'small'}-body calls (plain):\n${diff}`);
  return { requests: REQUESTS, body: LARGE ? 'large' : 'small', ceiling, ours };
}

async function calls(url: string, body: string): Promise<void> {
  await autocannon({ url: `${url}/sync`, method: 'POST', headers: { 'content-type': 'application/json' }, body, connections: 10, amount: REQUESTS });
}
