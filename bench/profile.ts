// BENCH_ONLY=profile: where ours spends more per settled call than the ceiling. Each server gets the
// same REQUESTS calls (ours on an application it has settled, plain; BENCH_PROFILE_BODY=large: the
// 1.3 MiB body), bench/call-probe.mjs takes a CPU profile of those calls only and counts what each
// allocated on V8's heap and what its collections cost, and bench/profile-diff.mjs compares the two
// profiles per request.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { startNatsServer } from '../test/support/nats-server.js';
import { appRequest, withLargeManagedFields } from './bodies.js';
import { startLoadWadm } from './load-wadm.js';
import { until } from '../test/support/wait.js';
import { CEILING_NODE_ARGS, OURS_NODE_ARGS, OURS_ENV, serve, settle, type Pinning, type Server } from './processes.js';

const LARGE = process.env['BENCH_PROFILE_BODY'] === 'large';
const REQUESTS = Number(process.env['BENCH_PROFILE_REQUESTS'] ?? (LARGE ? 1_000 : 100_000));

export async function profileSettled(pin: Pinning) {
  const nats = await startNatsServer({ jetstream: false });
  const wadm = await startLoadWadm({ servers: nats.url, hosts: true });
  const dirs = { ceiling: mkdtempSync(join(tmpdir(), 'bench-profile-ceiling-')), ours: mkdtempSync(join(tmpdir(), 'bench-profile-ours-')) };
  const allocation: Record<'ceiling' | 'ours', Allocation | undefined> = { ceiling: undefined, ours: undefined };
  try {
    const ours = await serve('dist/main.js', {
      env: { ...OURS_ENV, NATS_URL: nats.url, BENCH_PROBE_DIR: dirs.ours },
      pin,
      nodeArgs: [...OURS_NODE_ARGS, ...PROBED],
    });
    const body = await settle(ours.url, LARGE ? withLargeManagedFields(appRequest(1)) : appRequest(0));
    allocation.ours = await calls(ours, body, dirs.ours);
    await ours.stop();
    const ceiling = await serve('bench/ceiling-server.mjs', {
      pin,
      env: { BENCH_PROBE_DIR: dirs.ceiling },
      nodeArgs: [...CEILING_NODE_ARGS, ...PROBED],
    });
    allocation.ceiling = await calls(ceiling, body, dirs.ceiling);
    await ceiling.stop();
  } finally {
    await wadm.stop();
    await nats.dispose();
  }
  const [ceiling, ours] = [dirs.ceiling, dirs.ours].map((dir) => join(dir, 'calls.cpuprofile'));
  const diff = execFileSync(process.execPath, [resolve(import.meta.dirname, 'profile-diff.mjs'), ceiling!, ours!, String(REQUESTS)], {
    encoding: 'utf8',
  });
  console.log(`\nCPU profiles of ${REQUESTS} settled ${LARGE ? 'large' : 'small'}-body calls (plain):\n${diff}`);
  for (const [name, a] of Object.entries(allocation)) {
    console.log(
      `  ${name.padEnd(8)} allocated ${a!.kibPerCall} KiB per call; ${a!.collectionsPer1000} collections per 1,000 calls (${JSON.stringify(a!.collections)}), ${a!.gcMicrosPerCall} µs in them per call`,
    );
  }
  return { requests: REQUESTS, body: LARGE ? 'large' : 'small', ceiling, ours, allocation };
}

interface Allocation {
  kibPerCall: number;
  collectionsPer1000: number;
  collections: Record<string, number>;
  gcMicrosPerCall: number;
}

const PROBED = ['--import', resolve(import.meta.dirname, 'call-probe.mjs')];

/** REQUESTS calls, between the two signals that start and end the call probe's profile and count. */
async function calls(server: Server, body: string, dir: string): Promise<Allocation> {
  process.kill(server.pid, 'SIGUSR2');
  await autocannon({
    url: `${server.url}/sync`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections: 10,
    amount: REQUESTS,
  });
  process.kill(server.pid, 'SIGUSR2');
  const file = join(dir, 'allocation.json');
  const written = await until(() => probeReading(file));
  const round = (n: number) => Math.round(n * 100) / 100;
  const total = Object.values(written.collections).reduce((sum, n) => sum + n, 0);
  return {
    kibPerCall: round(written.allocatedBytes / REQUESTS / 1024),
    collectionsPer1000: round((total / REQUESTS) * 1000),
    collections: written.collections,
    gcMicrosPerCall: round(written.gcMicros / REQUESTS),
  };
}

interface ProbeReading {
  allocatedBytes: number;
  collections: Record<string, number>;
  gcMicros: number;
}

/** The probe's reading once it is written whole. */
function probeReading(file: string): ProbeReading | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as ProbeReading;
  } catch {
    return undefined;
  }
}
