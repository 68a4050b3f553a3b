// What a new application's hook call costs the service in CPU, beside what the load generator
// spends: `BENCH_COLD_CPU_APPS=1000 npx tsx bench/cold-cpu.ts` (after `npm run build` and the test
// set-up; `--one-lattice` puts them all in `default`). The built service runs as the bench's cold
// path runs it (its CPU, the pod's memory limit) against nats-server and the real wadm on the other
// CPU; its CPU time (all threads, user and system) is read from /proc around the calls. Extra node
// flags for the service: BENCH_COLD_CPU_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof".
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNatsServer } from '../test/support/nats-server.js';
import { startWadm } from '../test/support/wadm.js';
import { appRequest } from './bodies.js';
import { lightPoster, moveSelfTo, OURS_ENV, OURS_NODE_ARGS, pinLoadGenerator, pool, serve } from './processes.js';

const APPS = Number(process.env['BENCH_COLD_CPU_APPS'] ?? 1000);
const oneLattice = process.argv.includes('--one-lattice');
const SLICE = Number(process.env['BENCH_COLD_CPU_SLICE'] ?? 250);

/** utime + stime of a process, all its threads, in seconds. */
function cpuSeconds(pid: string): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const pin = pinLoadGenerator();
const nats = await startNatsServer();
const wadm = await startWadm(nats.url);
if (pin.servers !== undefined) moveSelfTo(pin.servers);
const policy = join(mkdtempSync(join(tmpdir(), 'cold-cpu-')), 'policy.yaml');
writeFileSync(policy, 'rules:\n  - namespaces: ["*"]\n    lattices: ["*"]\n');
const extra = (process.env['BENCH_COLD_CPU_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
// BENCH_COLD_CPU_SERVER=bench/cold-ceiling-server.mjs measures the bare forwarder instead.
const script = process.env['BENCH_COLD_CPU_SERVER'] ?? 'dist/main.js';
const service = await serve(script, {
  env: { ...OURS_ENV, NATS_URL: nats.url, LATTICE_POLICY_FILE: policy },
  nodeArgs: [...OURS_NODE_ARGS, ...extra],
  pin,
});
try {
  // The server may run under taskset or a memory cgroup's wrapper: node is its first child then.
  const children = readFileSync(`/proc/${service.pid}/task/${service.pid}/children`, 'utf8').trim().split(' ').filter(Boolean);
  const pid = children[0] ?? String(service.pid);
  const bodies = Array.from({ length: APPS }, (_, i) => JSON.stringify(appRequest(i, 'cold', oneLattice ? 'default' : `team-${i % 20}`)));
  const sync = lightPoster(service.url, 5);
  const before = cpuSeconds(pid);
  const bench = process.cpuUsage();
  const started = performance.now();
  // In slices of SLICE calls, each slice's CPU apart: what a fresh process spends warming up (V8
  // compiling the hot paths) shows as the first slices' surplus over the last ones.
  const slices: number[] = [];
  for (let from = 0; from < APPS; from += SLICE) {
    const at = cpuSeconds(pid);
    const indices = Array.from({ length: Math.min(SLICE, APPS - from) }, (_, k) => from + k);
    await pool(indices, 5, (i) => sync(bodies[i]!));
    slices.push(((cpuSeconds(pid) - at) / indices.length) * 1000);
  }
  const seconds = (performance.now() - started) / 1000;
  const used = cpuSeconds(pid) - before;
  const generator = process.cpuUsage(bench);
  console.log(`${APPS} new applications ${oneLattice ? 'in one lattice' : 'over 20 lattices'}, 5 workers: ${seconds.toFixed(2)} s`);
  console.log(`  the service: ${used.toFixed(2)} s of CPU, ${((used / APPS) * 1000).toFixed(2)} ms per application`);
  console.log(`  per slice of ${SLICE} calls: ${slices.map((ms) => ms.toFixed(2)).join(', ')} ms per application`);
  console.log(`  the load generator: ${((generator.user + generator.system) / 1e6).toFixed(2)} s of CPU`);
} finally {
  await service.stop();
  await wadm.stop();
  await nats.dispose();
}
