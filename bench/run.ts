// `npm run bench` (`-- --quick` for a local check under 2 minutes): the settled /sync against the
// bare-Fastify ceiling (small and large bodies), latency at a steady 1,000 syncs/s, new
// applications against the real wadm, memory with 10,000 settled applications, and settled
// applications answered by a fresh process (BENCH_ONLY=restart runs that part alone). Ceiling and
// ours are interleaved in every round; each ratio is reported as the median and range over the
// rounds. Writes every round to bench/results/latest.json (a quick or partial run to a file of its own).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { connect, headers, type NatsConnection } from 'nats';
import type { HookRequest } from '../src/schema/hook.js';
import { startNatsServer } from '../test/support/nats-server.js';
import { startWadm, wadmBinary } from '../test/support/wadm.js';
import { appRequest, withLargeManagedFields } from './bodies.js';
import { startLoadWadm } from './load-wadm.js';
import { paced, type Paced } from './paced.js';
import {
  CEILING_NODE_ARGS,
  OURS_ENV,
  OURS_NODE_ARGS,
  SERVER_MEMORY_LIMIT,
  SERVER_NODE,
  etagOf,
  lightPoster,
  metric,
  moveSelfTo,
  pinLoadGenerator,
  pool,
  post,
  serve,
  settle,
  type Pinning,
  type Server,
} from './processes.js';
import { profileSettled } from './profile.js';
import { restart } from './restart.js';
import { memoryProbe, mib, residentBytes, watchCpus, type CpusDuring, type ProbeReading } from './probe.js';
import { formatSpread, interleave, load, ratios, round2, spread, type Load, type Round } from './rounds.js';

const ROOT = resolve(import.meta.dirname, '..');
const QUICK = process.argv.includes('--quick');
const setting = (name: string, full: number, quick: number) => Number(process.env[name] ?? (QUICK ? quick : full));
// More, shorter rounds rather than fewer long ones: the median of the per-round ratios is what
// resists another process taking a CPU for a few seconds.
const DURATION = setting('BENCH_SECONDS', 4, 1);
const STEADY_SECONDS = setting('BENCH_STEADY_SECONDS', 6, 2);
const ROUNDS = setting('BENCH_ROUNDS', 7, 5);
const COLD_APPS = setting('BENCH_COLD_APPS', 300, 50);
const COLD_ROUNDS = setting('BENCH_COLD_ROUNDS', 3, 1);
/**
 * BENCH_COLD_SHAPES=spread: the cold part's shapes, `one` (all in lattice `default`) and `spread`;
 * the spread shape alone runs more applications per round in the time one lattice takes.
 */
const COLD_SHAPES = (process.env['BENCH_COLD_SHAPES'] ?? 'one,spread').split(',');
const CACHED_APPS = setting('BENCH_CACHED_APPS', 10_000, 2_000);
/** BENCH_RESTART_APPS=1000,10000: settled applications answered by a fresh process (bench/restart.ts). */
const RESTART_APPS = (process.env['BENCH_RESTART_APPS'] ?? (QUICK ? '1000' : '1000,10000')).split(',').map(Number);
/** How long the service rests after the resync pass before the memory is read again (no calls, as between Metacontroller's 60 s resyncs). */
const REST_SECONDS = setting('BENCH_REST_SECONDS', 30, 5);
/** BENCH_ONLY=settled,memory: run only these parts (while working on one of them); `profile` runs only when named. */
const runs = (part: string) => (process.env['BENCH_ONLY'] ?? part).split(',').includes(part);

async function main() {
  const started = performance.now();
  const pin = pinLoadGenerator();
  const results: Record<string, unknown> = {
    machine: machine(pin),
    settings: {
      quick: QUICK,
      rounds: ROUNDS,
      loadSeconds: DURATION,
      steadySeconds: STEADY_SECONDS,
      coldApps: COLD_APPS,
      coldRounds: COLD_ROUNDS,
      cachedApps: CACHED_APPS,
    },
  };
  console.log(`pinning: ${pin.note}\nmemory limit of the measured servers: ${SERVER_MEMORY_LIMIT.note}`);
  if (runs('settled')) results['settled'] = await settled(pin);
  if (runs('cold')) results['cold'] = await cold(pin);
  if (runs('memory')) results['memory'] = await memory();
  if (runs('restart')) results['restart'] = await restart(pin, RESTART_APPS, anyLattice);
  // Only when asked for by name: BENCH_ONLY=profile.
  if (process.env['BENCH_ONLY']?.split(',').includes('profile')) results['profile'] = await profileSettled(pin);
  results['loadAverageAtEnd'] = loadavg().map(round2);
  results['seconds'] = round2((performance.now() - started) / 1000);
  mkdirSync(resolve(ROOT, 'bench/results'), { recursive: true });
  writeFileSync(resolve(ROOT, RESULTS_FILE), JSON.stringify(results, null, 2) + '\n');
  console.log(`\n${results['seconds']} s; written to ${RESULTS_FILE}`);
}

/**
 * A full run's record is latest.json; a quick or partial run writes its own (latest-quick.json,
 * latest-memory.json, latest-settled+memory.json), so that checking one part keeps the full record.
 */
const RESULTS_FILE = `bench/results/latest${QUICK ? '-quick' : ''}${process.env['BENCH_ONLY'] ? `-${process.env['BENCH_ONLY'].split(',').join('+')}` : ''}.json`;

/** (a) and (b): the same bodies against the ceiling and against our settled /sync. */
async function settled(pin: Pinning) {
  const nats = await startNatsServer({ jetstream: false });
  const wadm = await startLoadWadm({ servers: nats.url, hosts: true });
  const ceiling = await serve('bench/ceiling-server.mjs', { pin, nodeArgs: CEILING_NODE_ARGS });
  const ours = await serve('dist/main.js', { env: { ...OURS_ENV, NATS_URL: nats.url }, pin, nodeArgs: OURS_NODE_ARGS });
  // Node's http server alone (small body only): what the framework under the ceiling and ours costs.
  const floor = await serve('bench/node-http-server.mjs', { pin, nodeArgs: CEILING_NODE_ARGS });
  let ceilingSameAnswer: Server | undefined;
  try {
    const small = await settle(ours.url, appRequest(0));
    const large = await settle(ours.url, withLargeManagedFields(appRequest(1)));
    const [smallEtag, largeEtag] = [await etagOf(ours.url, small), await etagOf(ours.url, large)];
    // The same bare Fastify answering ours' own 1.3 KiB answer instead of 29 bytes: the share of
    // the gap that is the answer's size (written by the server, read by the load generator).
    ceilingSameAnswer = await serve('bench/ceiling-server.mjs', {
      pin,
      nodeArgs: CEILING_NODE_ARGS,
      env: { CEILING_ANSWER: JSON.stringify(await post(ours.url, small)) },
    });
    const requestsBefore = wadm.count();
    const sameAnswer = ceilingSameAnswer;
    const run = (server: Server, body: string, headers?: Record<string, string>) => () =>
      watchCpus(pin, () =>
        load(server.url, body, { connections: 10, seconds: DURATION, pid: server.pid, ...(headers ? { headers } : {}) }),
      );
    const loads = (body: string, etag: string) => ({
      ceiling: run(ceiling, body),
      ...(body === small ? { ceilingSameAnswer: run(sameAnswer, body), floor: run(floor, body) } : {}),
      ours: run(ours, body),
      // What Metacontroller sends with webhook.etag on (our CompositeController turns it on).
      oursWithEtag: run(ours, body, { 'if-none-match': etag }),
    });
    // JIT and connection pools warm on both sides before anything counts.
    await interleave(1, loads(small, smallEtag));
    // The steady rate first, on a heap that the 1 MiB bodies have not yet grown.
    const steady = await interleave(ROUNDS, {
      ceiling: () => watchCpus(pin, () => paced(ceiling.url, small, 1000, STEADY_SECONDS)),
      ours: () => watchCpus(pin, () => paced(ours.url, small, 1000, STEADY_SECONDS)),
      oursWithEtag: () => watchCpus(pin, () => paced(ours.url, small, 1000, STEADY_SECONDS, smallEtag)),
    });
    const rows = { steadyAt1000: reportSteady(steady) } as Record<string, unknown>;
    for (const [name, body, etag] of [
      ['small', small, smallEtag],
      ['large', large, largeEtag],
    ] as const) {
      rows[name] = reportThroughput(name, Buffer.byteLength(body), await interleave(ROUNDS, loads(body, etag)));
    }
    const natsRequests = wadm.count() - requestsBefore;
    console.log(`NATS requests during all settled runs: ${natsRequests}`);
    return { ...rows, natsRequestsWhileSettled: natsRequests };
  } finally {
    await Promise.all([ceiling.stop(), ours.stop(), floor.stop(), ceilingSameAnswer?.stop()]);
    await wadm.stop();
    await nats.dispose();
  }
}

type Watched<T> = T & { cpus?: CpusDuring };

/** What the pinned CPUs did over every run of these rounds: a spread of ratios is read beside it. */
function reportCpus(rounds: Round<Watched<object>>[]) {
  const runs = rounds
    .flatMap((r) => Object.values(r.results))
    .filter((l) => l.cpus !== undefined)
    .map((l) => l.cpus!);
  if (runs.length === 0) return undefined;
  const share = (measure: (c: CpusDuring) => number) => spread(runs.map(measure));
  const cpus = {
    serverStolen: share((c) => c.server.stolen),
    serverIdle: share((c) => c.server.idle),
    loadGeneratorStolen: share((c) => c.loadGenerator.stolen),
  };
  console.log(
    `  the CPUs over the ${runs.length} runs, % of their time: the server's stolen by the hypervisor ${formatSpread(cpus.serverStolen)}, idle ${formatSpread(cpus.serverIdle)}; the load generator's stolen ${formatSpread(cpus.loadGeneratorStolen)}`,
  );
  return cpus;
}

function reportSteady(rounds: Round<Watched<Paced>>[]) {
  const line = (name: string) => {
    const p = (measure: (p: Paced) => number) => formatSpread(spread(rounds.map((r) => measure(r.results[name]!))), ' ms');
    return `p50 ${p((x) => x.p50)}, p99 ${p((x) => x.p99)}, max ${p((x) => x.max)}; non-2xx ${rounds.reduce((n, r) => n + r.results[name]!.non2xx, 0)}`;
  };
  const p99Ratio = ratios(rounds, 'ours', 'ceiling', (p) => p.p99);
  const p99RatioWithEtag = ratios(rounds, 'oursWithEtag', 'ceiling', (p) => p.p99);
  console.log(`\na steady 1,000 syncs/s (small body), latency from send to answer: median (min-max) of ${rounds.length} rounds`);
  console.log(`  ceiling (bare Fastify): ${line('ceiling')}`);
  console.log(`  ours:                   ${line('ours')}`);
  console.log(`  ours, If-None-Match:    ${line('oursWithEtag')}`);
  console.log(
    `  p99 ratio to the ceiling's in the same round: ${formatSpread(p99Ratio, 'x')} plain, ${formatSpread(p99RatioWithEtag, 'x')} with ETag`,
  );
  return { p99Ratio, p99RatioWithEtag, cpus: reportCpus(rounds), rounds };
}

function reportThroughput(name: string, bytes: number, rounds: Round<Watched<Load>>[]) {
  const throughputRatio = ratios(rounds, 'ours', 'ceiling', (l) => l.rps);
  const throughputRatioWithEtag = ratios(rounds, 'oursWithEtag', 'ceiling', (l) => l.rps);
  const line = (label: string, key: string) => {
    const rps = spread(rounds.map((r) => r.results[key]!.rps));
    const failed = rounds.reduce((n, r) => n + r.results[key]!.non2xx + r.results[key]!.errors, 0);
    return `  ${label.padEnd(24)}${formatSpread(rps, ' req/s')}  (5xx and errors ${failed})`;
  };
  const percent = (s: typeof throughputRatio) =>
    `${(s.median * 100).toFixed(1)} % (${(s.min * 100).toFixed(1)}-${(s.max * 100).toFixed(1)} %)`;
  console.log(`\nsettled /sync, ${name} body (${(bytes / 1024).toFixed(1)} KiB): median (min-max) of ${rounds.length} interleaved rounds`);
  console.log(line('ceiling (bare Fastify)', 'ceiling'));
  console.log(line('ours', 'ours'));
  console.log(line('ours, If-None-Match', 'oursWithEtag'));
  console.log(`  ratio to the ceiling in the same round: ${percent(throughputRatio)} plain, ${percent(throughputRatioWithEtag)} with ETag`);
  const cpu = cpuPerRequest(rounds);
  if (cpu) {
    console.log(
      `  CPU per request, µs: ceiling ${formatSpread(cpu.ceiling)}, ours ${formatSpread(cpu.ours)}, ours with ETag ${formatSpread(cpu.oursWithEtag)}`,
    );
    console.log(
      `  CPU ratio (the ceiling's CPU per request to ours', same round): ${percent(cpu.ratio)} plain, ${percent(cpu.ratioWithEtag)} with ETag`,
    );
    const least = (name: string) => {
      const { micros, cpus } = cpu.least[name]!;
      const share = name === 'ceiling' ? '' : `, the ceiling's ${Math.round((cpu.least['ceiling']!.micros / micros) * 100)} % of it`;
      return `${name} ${micros} µs (${cpus ? `stolen ${cpus.server.stolen} / ${cpus.loadGenerator.stolen} %` : 'steal unknown'}${share})`;
    };
    console.log(
      `  least CPU per request of any round, with the server's / load generator's steal in that run (steal only adds to it): ${Object.keys(cpu.least).map(least).join(', ')}`,
    );
  }
  const cpus = reportCpus(rounds);
  if (!rounds[0]?.results['ceilingSameAnswer']) return { bytes, throughputRatio, throughputRatioWithEtag, cpu, cpus, rounds };
  const sameAnswerRatio = ratios(rounds, 'ours', 'ceilingSameAnswer', (l) => l.rps);
  console.log(line("ceiling, ours' answer", 'ceilingSameAnswer'));
  console.log(`  plain, ratio to the ceiling answering ours' answer: ${percent(sameAnswerRatio)}`);
  const framework = {
    ceilingToFloor: ratios(rounds, 'ceiling', 'floor', (l) => l.rps),
    oursToFloor: ratios(rounds, 'ours', 'floor', (l) => l.rps),
  };
  console.log(line('node:http, no framework', 'floor'));
  const floorCpu = cpu ? spread(rounds.map((r) => r.results['floor']!.cpuMicrosPerRequest!)) : undefined;
  console.log(
    `  ratio to node:http in the same round: the ceiling ${percent(framework.ceilingToFloor)}, ours ${percent(framework.oursToFloor)} plain${floorCpu ? `; node:http's CPU per request ${formatSpread(floorCpu)} µs` : ''}`,
  );
  return { bytes, throughputRatio, throughputRatioWithEtag, cpu, cpus, sameAnswerRatio, framework: { ...framework, floorCpu }, rounds };
}

/**
 * What each request cost the server in CPU time, and the ceiling's cost over ours per round: the
 * throughput ratio a machine of our own would show. Time a neighbour runs on the CPU is not
 * counted; time the hypervisor takes it away (steal) still raises the cost, hence `least`.
 */
function cpuPerRequest(rounds: Round<Watched<Load>>[]) {
  if (rounds.some((r) => Object.values(r.results).some((l) => l.cpuMicrosPerRequest === undefined))) return undefined;
  const micros = (name: string) => spread(rounds.map((r) => r.results[name]!.cpuMicrosPerRequest!));
  const cheaper = (name: string) => ratios(rounds, 'ceiling', name, (l) => l.cpuMicrosPerRequest!);
  // A vCPU taken away by the hypervisor leaves its caches cold: steal raises a run's CPU per
  // request (docs/benchmarks-history.md, ninth round) and never lowers it, so each one's least is
  // its quietest.
  const leastOf = (name: string) => {
    const runs = rounds.map((r) => r.results[name]!);
    const quietest = runs.reduce((best, run) => (run.cpuMicrosPerRequest! < best.cpuMicrosPerRequest! ? run : best));
    return { micros: quietest.cpuMicrosPerRequest!, cpus: quietest.cpus };
  };
  const least = Object.fromEntries(Object.keys(rounds[0]!.results).map((name) => [name, leastOf(name)]));
  return {
    ceiling: micros('ceiling'),
    ours: micros('ours'),
    oursWithEtag: micros('oursWithEtag'),
    ratio: cheaper('ours'),
    ratioWithEtag: cheaper('oursWithEtag'),
    least,
  };
}

/**
 * (c): COLD_APPS new applications put and deployed against the real wadm (or the load responder), with
 * Metacontroller's 5 workers; and, each on a fresh wadm, the same applications put and deployed
 * straight over NATS (versions, put, deploy: the least any client needs), to show wadm's share, and
 * through a bare forwarder (bench/cold-ceiling-server.mjs: the least any hook needs), to show the
 * HTTP hop's.
 * Twice: all in one lattice (`default`), and spread over COLD_LATTICES lattices named like a
 * team's (`team-0`…, with a `-`: each lattice's first put reads its index key once).
 */
async function cold(pin: Pinning) {
  const shapes: [string, string, (i: number) => string][] = [
    ['one', 'one lattice', () => 'default'],
    ['spread', `spread over ${COLD_LATTICES} lattices`, (i) => `team-${i % COLD_LATTICES}`],
  ];
  const results: Record<string, unknown> = {};
  for (const [key, shape, latticeOf] of shapes) if (COLD_SHAPES.includes(key)) results[shape] = await coldShape(shape, latticeOf, pin);
  return results;
}

const COLD_LATTICES = 20;

/**
 * nats-server and wadm (the lattice) on the load generator's CPU, and what drives them on the other
 * one: the bench process with the service, or the bench process alone sending straight to wadm. As
 * in a cluster, where Metacontroller, the service and wadm are pods of their own, neither side is
 * charged the other's CPU (on one CPU, the hook's HTTP client and the service would slow wadm).
 */
async function coldShape(shape: string, latticeOf: (i: number) => string, pin: Pinning) {
  const real = hasRealWadm();
  const apps = Array.from({ length: COLD_APPS }, (_, i) => i);
  // Built before the clock starts: what the load generator costs is neither side's.
  const hookBodies = apps.map((i) => JSON.stringify(appRequest(i, 'cold', latticeOf(i))));
  const directApps = apps.map((i) => directApp(i, latticeOf(i)));
  const runDirect = () =>
    withWadm(real, pin, async (natsUrl) => {
      const nc = await connect({ servers: natsUrl });
      const started = performance.now();
      await pool(apps, 5, (i) => putAndDeployDirectly(nc, directApps[i]!));
      await nc.close();
      return (performance.now() - started) / 1000;
    });
  // Through a hook server: ours, or the bare forwarder (bench/cold-ceiling-server.mjs).
  const runThrough = (script: string) =>
    withWadm(real, pin, async (natsUrl) => {
      const ours = script === 'dist/main.js';
      const service = await serve(script, {
        env: { ...OURS_ENV, NATS_URL: natsUrl, LATTICE_POLICY_FILE: anyLattice() },
        pin,
        nodeArgs: ours ? OURS_NODE_ARGS : CEILING_NODE_ARGS,
      });
      const sync = lightPoster(service.url, 5);
      try {
        const started = performance.now();
        const pending = new Set(apps);
        let calls = 0;
        // An app not yet deployed is retried, as its resyncAfterSeconds would have Metacontroller do.
        while (pending.size > 0 && performance.now() - started < 600_000) {
          await pool([...pending], 5, async (i) => {
            calls++;
            const answer = (await sync(hookBodies[i]!)) as { status: { version?: string; deployedVersion?: string } };
            if (answer.status.deployedVersion && answer.status.deployedVersion === answer.status.version) pending.delete(i);
          });
        }
        const seconds = (performance.now() - started) / 1000;
        return {
          seconds,
          deployed: COLD_APPS - pending.size,
          calls,
          // Counted by ours only; the forwarder sends no more than its 3.
          wadmRequests: ours ? await metric(service.url, 'wasmcloud_metacontroller_wadm_requests_total') : undefined,
        };
      } finally {
        await service.stop();
      }
    });
  const runOurs = () => runThrough('dist/main.js');
  const runForwarder = () => runThrough('bench/cold-ceiling-server.mjs');
  // Rounds, each running the three back to back in an order that rotates: one run of each is at
  // the mercy of this VM's steal (the same code gave 1.15x and 1.91x).
  type Through = Awaited<ReturnType<typeof runOurs>>;
  const rounds: { direct: number; forwarder: Through; ours: Through }[] = [];
  for (let round = 0; round < COLD_ROUNDS; round++) {
    const result: Partial<(typeof rounds)[number]> = {};
    const sides = [
      async () => void (result.direct = await runDirect()),
      async () => void (result.forwarder = await runForwarder()),
      async () => void (result.ours = await runOurs()),
    ];
    for (let i = 0; i < sides.length; i++) await sides[(i + round) % sides.length]!();
    rounds.push(result as (typeof rounds)[number]);
  }
  const ratio = spread(rounds.map((r) => r.ours.seconds / r.direct));
  const forwarderRatio = spread(rounds.map((r) => r.forwarder.seconds / r.direct));
  const oursOverForwarder = spread(rounds.map((r) => r.ours.seconds / r.forwarder.seconds));
  const last = rounds.at(-1)!.ours;
  const wadmRequests = last.wadmRequests!;
  const seconds = (pick: (r: (typeof rounds)[number]) => number) => rounds.map((r) => pick(r).toFixed(1)).join(', ');
  const against = real ? 'the real wadm 0.21.1' : 'the in-memory load responder';
  console.log(`\ncold path, ${COLD_APPS} new applications in ${shape} against ${against}, 5 workers, ${COLD_ROUNDS} rounds:`);
  console.log(`  straight to wadm (versions, put, deploy):   ${seconds((r) => r.direct)} s`);
  console.log(`  through a bare forwarder (the same 3):      ${seconds((r) => r.forwarder.seconds)} s`);
  console.log(
    `  through the hook:                           ${seconds((r) => r.ours.seconds)} s (each: ${last.deployed} deployed, ${last.calls} hook calls, ${wadmRequests} wadm requests, ${round2(wadmRequests / COLD_APPS)} per application)`,
  );
  console.log(
    `  ratio to straight: ${formatSpread(ratio)}x (the bare forwarder's: ${formatSpread(forwarderRatio)}x); ours to the forwarder: ${formatSpread(oursOverForwarder)}x`,
  );
  return {
    wadm: against,
    apps: COLD_APPS,
    rounds: rounds.map((r) => ({
      directSeconds: round2(r.direct),
      forwarderSeconds: round2(r.forwarder.seconds),
      seconds: round2(r.ours.seconds),
      ratio: round2(r.ours.seconds / r.direct),
      wadmRequests: r.ours.wadmRequests,
      hookCalls: r.ours.calls,
    })),
    ratio,
    forwarderRatio,
    oursOverForwarder,
  };
}

async function withWadm<T>(real: boolean, pin: Pinning, work: (natsUrl: string) => Promise<T>): Promise<T> {
  const nats = await startNatsServer();
  const wadm = real ? await startWadm(nats.url) : await startLoadWadm({ servers: nats.url });
  // Started on the load generator's CPU; the work drives them from the other one.
  if (pin.servers !== undefined) moveSelfTo(pin.servers);
  try {
    return await work(nats.url);
  } finally {
    if (pin.loadGenerator !== undefined) moveSelfTo(pin.loadGenerator);
    await wadm.stop();
    await nats.dispose();
  }
}

/** What a client without the hook sends for application i: its name, lattice and manifest. */
function directApp(i: number, lattice: string): { name: string; lattice: string; manifest: string } {
  const request = appRequest(i, 'direct', lattice);
  const { lattice: _lattice, ...spec } = request.parent.spec as Record<string, unknown>;
  const name = request.parent.metadata.name;
  const manifest = JSON.stringify({
    apiVersion: 'core.oam.dev/v1beta1',
    kind: 'Application',
    metadata: { name, annotations: { version: 'v1' } },
    spec,
  });
  return { name, lattice, manifest };
}

async function putAndDeployDirectly(
  nc: NatsConnection,
  { name, lattice, manifest }: { name: string; lattice: string; manifest: string },
): Promise<void> {
  const h = headers();
  h.set('Content-Type', 'application/json');
  await nc.request(`wadm.api.${lattice}.model.versions.${name}`, '', { timeout: 60_000 });
  await nc.request(`wadm.api.${lattice}.model.put`, manifest, { timeout: 60_000, headers: h });
  await nc.request(`wadm.api.${lattice}.model.deploy.${name}`, JSON.stringify({ version: 'v1' }), { timeout: 60_000 });
}

/**
 * (d): the service's memory idle (REST_SECONDS after its start, without calls) and holding
 * CACHED_APPS settled applications: each synced as new,
 * then resynced with its status fed back (as Metacontroller does) until most answers are reused
 * from memory. Read right after the last pass (RSS from /proc), then after REST_SECONDS without
 * calls as found and after a forced full GC (bench/memory-probe.mjs).
 */
async function memory() {
  const nats = await startNatsServer({ jetstream: false });
  // Hosts in every lattice: the applications settle as Deployed, as in a healthy cluster.
  const wadm = await startLoadWadm({ servers: nats.url, hosts: true });
  const probe = memoryProbe();
  const env = { ...OURS_ENV, NATS_URL: nats.url, LATTICE_POLICY_FILE: anyLattice(), ...probe.env, ...snapshotDir() };
  const ours = await serve('dist/main.js', { env, nodeArgs: [...probe.nodeArgs, ...OURS_NODE_ARGS] });
  try {
    // Idle as a replica without calls is: at rest. Its start grew the heap too, and what gives
    // that back (V8's memory reducer on Node 20, ~15 s after the start; the service's reclaimer on
    // Node 24, at once) needs a quiet process: not even /metrics is asked meanwhile.
    await new Promise((r) => setTimeout(r, REST_SECONDS * 1000));
    const idle = await probe.read(ours.pid);
    const passes = await settleAll(ours.url);
    // Read from /proc, which neither signals nor collects: the resident memory the pass left.
    const afterPass = residentBytes(ours.pid) ?? 0;
    // Then as between Metacontroller's resyncs (every 60 s): no calls, V8 left to itself.
    await new Promise((r) => setTimeout(r, REST_SECONDS * 1000));
    const loaded = await probe.read(ours.pid);
    const row = (label: string, r: ProbeReading) =>
      `  ${label.padEnd(34)}RSS ${mib(r.found.rss)} MiB, heap used ${mib(r.found.heapUsed)} MiB; after a full GC: RSS ${mib(r.afterGc.rss)} MiB, heap used ${mib(r.afterGc.heapUsed)} MiB`;
    console.log(
      `\nmemory (passes over ${CACHED_APPS} applications until all settled: ${passes.length}, answers reused in the last: ${passes.at(-1)})`,
    );
    console.log(row(`idle, after ${REST_SECONDS} s at rest`, idle));
    console.log(`  ${CACHED_APPS} settled applications: RSS right after the resync pass ${mib(afterPass)} MiB`);
    console.log(row(`  then after ${REST_SECONDS} s without calls`, loaded));
    const perApp = (loaded.afterGc.heapUsed - idle.afterGc.heapUsed) / CACHED_APPS;
    console.log(`  heap per application (after GC): ${(perApp / 1024).toFixed(2)} KiB`);
    const mibOf = (r: ProbeReading) => ({
      rssMiB: mib(r.found.rss),
      heapUsedMiB: mib(r.found.heapUsed),
      afterGc: {
        rssMiB: mib(r.afterGc.rss),
        heapUsedMiB: mib(r.afterGc.heapUsed),
        heapTotalMiB: mib(r.afterGc.heapTotal),
        externalMiB: mib(r.afterGc.external),
        v8MallocedMiB: mib(r.afterGc.v8Malloced),
        ...(r.afterGc.resident ? { residentMiB: Object.fromEntries(Object.entries(r.afterGc.resident).map(([k, v]) => [k, mib(v)])) } : {}),
        ...(r.afterGc.spaces
          ? {
              heapSpacesMiB: Object.fromEntries(
                Object.entries(r.afterGc.spaces).map(([k, v]) => [k, `${mib(v.committed)} committed, ${mib(v.used)} used`]),
              ),
            }
          : {}),
      },
      ...(r.snapshot ? { snapshot: r.snapshot } : {}),
    });
    return {
      apps: CACHED_APPS,
      passes,
      idle: mibOf(idle),
      rssAfterResyncPassMiB: mib(afterPass),
      restSeconds: REST_SECONDS,
      settled: mibOf(loaded),
      heapPerAppKiB: round2(perApp / 1024),
    };
  } finally {
    await ours.stop();
    await wadm.stop();
    await nats.dispose();
  }
}

/** Syncs every application, feeding each answer's status back, until a pass reuses most answers; the reused count of each pass. */
async function settleAll(url: string): Promise<number[]> {
  const statuses = new Map<number, unknown>();
  const passes: number[] = [];
  const apps = Array.from({ length: CACHED_APPS }, (_, i) => i);
  // wadm of each lattice must have answered within 5 s for an answer to be reused, so a few
  // calls per lattice are computed in every pass: settled means 80 % reused.
  for (let pass = 0; pass < 6 && (passes.at(-1) ?? 0) < 0.8 * CACHED_APPS; pass++) {
    const reusedBefore = await metric(url, 'wasmcloud_metacontroller_hook_answers_total{source="memory"}');
    await pool(apps, 20, async (i) => {
      const request = appRequest(i, 'memory');
      (request.parent.spec as { lattice?: string }).lattice = `lattice${i % LATTICES}`;
      if (statuses.has(i)) request.parent.status = statuses.get(i) as HookRequest['parent']['status'];
      statuses.set(i, { ...((await post(url, JSON.stringify(request))) as { status: object }).status, observedGeneration: 1 });
    });
    passes.push((await metric(url, 'wasmcloud_metacontroller_hook_answers_total{source="memory"}')) - reusedBefore);
    console.log(`  memory: pass ${pass + 1}, ${passes.at(-1)} answers reused`);
    // The load responder reports each deploy 5 ms after it; let the statuses arrive before the next pass.
    if (pass === 0) await new Promise((r) => setTimeout(r, 1000));
  }
  return passes;
}

/**
 * The applications of the memory run are spread over LATTICES lattices: before its first put the
 * hook reads its lattice's list of models (model.get without a name), which grows with the
 * lattice, so 10,000 first puts into one lattice cost a quadratic ~30 minutes of list replies
 * (and soon exceed NATS's 1 MiB max_payload). What a replica keeps per application is the same.
 */
const LATTICES = 100;

function anyLattice(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'bench-policy-')), 'policy.yaml');
  writeFileSync(file, 'rules:\n  - namespaces: ["*"]\n    lattices: ["*"]\n');
  return file;
}

/** BENCH_HEAP_SNAPSHOT_DIR: write a heap snapshot at each memory reading (idle, settled) there. */
function snapshotDir(): Record<string, string> {
  const dir = process.env['BENCH_HEAP_SNAPSHOT_DIR'];
  return dir ? { BENCH_HEAP_SNAPSHOT_DIR: resolve(dir) } : {};
}

function hasRealWadm(): boolean {
  try {
    wadmBinary();
    return true;
  } catch {
    return false;
  }
}

function machine(pin: Pinning) {
  const serverNode =
    SERVER_NODE === process.execPath ? process.version : execFileSync(SERVER_NODE, ['--version'], { encoding: 'utf8' }).trim();
  return {
    cpus: cpus().length,
    cpu: cpus()[0]?.model,
    memoryGiB: round2(totalmem() / 2 ** 30),
    node: process.version,
    platform: process.platform,
    pinning: pin,
    loadAverageAtStart: loadavg().map(round2),
    servers: {
      node: serverNode,
      oursNodeArgs: OURS_NODE_ARGS,
      ceilingNodeArgs: CEILING_NODE_ARGS,
      oursEnv: OURS_ENV,
      memoryLimit: SERVER_MEMORY_LIMIT.note,
    },
  };
}

await main();
