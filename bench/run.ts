// `npm run bench`: the settled /sync against the bare-Fastify ceiling (small and large bodies),
// p99 at 1,000 syncs/s, 1,000 new applications against the real wadm, and RSS with 10,000
// applications cached. Prints ratios and writes bench/results/latest.json.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { resolve } from 'node:path';
import autocannon from 'autocannon';
import { connect, headers, type NatsConnection } from 'nats';
import type { HookRequest } from '../src/schema/hook.js';
import { startNatsServer } from '../test/support/nats-server.js';
import { startWadm, wadmBinary } from '../test/support/wadm.js';
import { appRequest, withLargeManagedFields } from './bodies.js';
import { startLoadWadm } from './load-wadm.js';
import { paced } from './paced.js';

const ROOT = resolve(import.meta.dirname, '..');
const DURATION = Number(process.env['BENCH_SECONDS'] ?? 10);
const COLD_APPS = Number(process.env['BENCH_COLD_APPS'] ?? 1000);
const CACHED_APPS = Number(process.env['BENCH_CACHED_APPS'] ?? 10_000);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);

interface Load { rps: number; p50: number; p99: number; errors: number; non2xx: number }

async function main() {
  const results: Record<string, unknown> = { machine: machine(), durationSeconds: DURATION };
  results['settled'] = await settled();
  results['cold'] = await cold();
  results['memory'] = await memory();
  mkdirSync(resolve(ROOT, 'bench/results'), { recursive: true });
  writeFileSync(resolve(ROOT, 'bench/results/latest.json'), JSON.stringify(results, null, 2) + '\n');
  console.log(`\nwritten to bench/results/latest.json`);
}

/** (a) and (b): the same bodies against the ceiling and against our settled /sync. */
async function settled() {
  const nats = await startNatsServer({ jetstream: false });
  const wadm = await startLoadWadm({ servers: nats.url, hosts: true });
  const ceiling = await serve(['bench/ceiling-server.mjs'], {});
  const ours = await serve(['dist/main.js'], { NATS_URL: nats.url });
  try {
    const small = await settle(ours.url, appRequest(0));
    const large = await settle(ours.url, withLargeManagedFields(appRequest(1)));
    const requestsBefore = wadm.count();
    const rows: Record<string, unknown> = {};
    // The steady-rate latency first, on a heap that the 1 MiB bodies have not yet grown.
    const steadyCeiling = await paced(ceiling.url, small, 1000, DURATION);
    const steady = await paced(ours.url, small, 1000, DURATION);
    const steadyEtag = await paced(ours.url, small, 1000, DURATION, await etagOf(ours.url, small));
    const line = (p: typeof steady) => `p50 ${p.p50} ms, p99 ${p.p99} ms, max ${p.max} ms (p99 from the due time ${p.p99FromDue} ms; non-2xx ${p.non2xx})`;
    console.log(`\na steady 1,000 syncs/s (small body), latency from send to answer`);
    console.log(`  ceiling (bare Fastify): ${line(steadyCeiling)}`);
    console.log(`  ours:                   ${line(steady)}`);
    console.log(`  ours, If-None-Match:    ${line(steadyEtag)}`);
    const pacedRows = { ceiling: steadyCeiling, plain: steady, etag: steadyEtag, p99Ratio: round(steady.p99 / steadyCeiling.p99) };
    for (const [name, body] of [['small', small], ['large', large]] as const) {
      const bytes = Buffer.byteLength(body);
      const etag = await etagOf(ours.url, body);
      // Interleaved rounds, median of each: this machine's throughput drifts from minute to minute.
      const rounds: [Load, Load, Load][] = [];
      for (let round = 0; round < ROUNDS; round++) {
        rounds.push([
          await load(ceiling.url, body, { connections: 10 }),
          await load(ours.url, body, { connections: 10 }),
          // What Metacontroller sends with webhook.etag on (our CompositeController turns it on).
          await load(ours.url, body, { connections: 10, headers: { 'if-none-match': etag } }),
        ]);
      }
      const [base, mine, mineEtag] = [0, 1, 2].map((i) => median(rounds.map((r) => r[i]!))) as [Load, Load, Load];
      rows[name] = {
        bytes,
        ceiling: base,
        ours: mine,
        oursWithEtag: mineEtag,
        throughputRatio: round(mine.rps / base.rps),
        throughputRatioWithEtag: round(mineEtag.rps / base.rps),
      };
      report(`settled /sync, ${name} body (${(bytes / 1024).toFixed(1)} KiB)`, base, mine, mineEtag);
    }
    const natsRequests = wadm.count() - requestsBefore;
    console.log(`NATS requests during all settled runs: ${natsRequests}`);
    return { ...rows, steadyAt1000: pacedRows, natsRequestsWhileSettled: natsRequests };
  } finally {
    await Promise.all([ceiling.stop(), ours.stop()]);
    await wadm.stop();
    await nats.dispose();
  }
}

/**
 * (c): COLD_APPS new applications put and deployed against the real wadm (or the double), with
 * Metacontroller's 5 workers; and, on a fresh wadm, the same applications put and deployed
 * straight over NATS (versions, put, deploy: the least any client needs), to show wadm's share.
 */
async function cold() {
  const real = hasRealWadm();
  const direct = await withWadm(real, async (natsUrl) => {
    const nc = await connect({ servers: natsUrl });
    const started = performance.now();
    await pool(Array.from({ length: COLD_APPS }, (_, i) => i), 5, (i) => putAndDeployDirectly(nc, i));
    await nc.close();
    return (performance.now() - started) / 1000;
  });
  const ours = await withWadm(real, async (natsUrl) => {
    const service = await serve(['dist/main.js'], { NATS_URL: natsUrl });
    try {
      const started = performance.now();
      const pending = new Set(Array.from({ length: COLD_APPS }, (_, i) => i));
      let calls = 0;
      // An app not yet deployed is retried, as its resyncAfterSeconds would have Metacontroller do.
      while (pending.size > 0 && performance.now() - started < 600_000) {
        await pool([...pending], 5, async (i) => {
          calls++;
          const answer = (await post(service.url, JSON.stringify(appRequest(i, 'cold')))) as { status: { version?: string; deployedVersion?: string } };
          if (answer.status.deployedVersion && answer.status.deployedVersion === answer.status.version) pending.delete(i);
        });
      }
      const seconds = (performance.now() - started) / 1000;
      return { seconds, deployed: COLD_APPS - pending.size, calls, wadmRequests: await metric(service.url, 'wasmcloud_metacontroller_wadm_requests_total') };
    } finally {
      await service.stop();
    }
  });
  const against = real ? 'the real wadm 0.21.1' : 'the wadm test double';
  console.log(`\ncold path, ${COLD_APPS} new applications against ${against}, 5 workers:`);
  console.log(`  straight to wadm (versions, put, deploy): ${direct.toFixed(1)} s`);
  console.log(`  through the hook:                          ${ours.seconds.toFixed(1)} s (${ours.deployed} deployed, ${ours.calls} hook calls, ${ours.wadmRequests} wadm requests), ${round(ours.seconds / direct)}x`);
  return { wadm: against, apps: COLD_APPS, directSeconds: round(direct), seconds: round(ours.seconds), deployed: ours.deployed, hookCalls: ours.calls, wadmRequests: ours.wadmRequests };
}

async function withWadm<T>(real: boolean, work: (natsUrl: string) => Promise<T>): Promise<T> {
  const nats = await startNatsServer();
  const wadm = real ? await startWadm(nats.url) : await startLoadWadm({ servers: nats.url });
  try {
    return await work(nats.url);
  } finally {
    await wadm.stop();
    await nats.dispose();
  }
}

async function putAndDeployDirectly(nc: NatsConnection, i: number): Promise<void> {
  const h = headers();
  h.set('Content-Type', 'application/json');
  const request = appRequest(i, 'direct');
  const manifest = { apiVersion: 'core.oam.dev/v1beta1', kind: 'Application', metadata: { name: request.parent.metadata.name, annotations: { version: 'v1' } }, spec: request.parent.spec };
  const name = request.parent.metadata.name;
  await nc.request(`wadm.api.default.model.versions.${name}`, '', { timeout: 60_000 });
  await nc.request('wadm.api.default.model.put', JSON.stringify(manifest), { timeout: 60_000, headers: h });
  await nc.request(`wadm.api.default.model.deploy.${name}`, JSON.stringify({ version: 'v1' }), { timeout: 60_000 });
}

/** (d): RSS of the service holding CACHED_APPS applications (derivations, models, statuses). */
async function memory() {
  const nats = await startNatsServer({ jetstream: false });
  const wadm = await startLoadWadm({ servers: nats.url });
  const ours = await serve(['dist/main.js'], { NATS_URL: nats.url });
  try {
    const idle = await metric(ours.url, 'wasmcloud_metacontroller_process_resident_memory_bytes');
    for (let round = 0; round < 2; round++) {
      await pool(Array.from({ length: CACHED_APPS }, (_, i) => i), 20, (i) => post(ours.url, JSON.stringify(appRequest(i, 'memory'))));
    }
    const rss = await metric(ours.url, 'wasmcloud_metacontroller_process_resident_memory_bytes');
    const mib = (bytes: number) => round(bytes / 1024 / 1024);
    console.log(`memory: RSS ${mib(idle)} MiB idle, ${mib(rss)} MiB with ${CACHED_APPS} applications cached`);
    return { apps: CACHED_APPS, idleRssMiB: mib(idle), rssMiB: mib(rss) };
  } finally {
    await ours.stop();
    await wadm.stop();
    await nats.dispose();
  }
}

/** Feeds the returned status back, as Metacontroller does, until the answer stops changing. */
async function settle(url: string, request: HookRequest): Promise<string> {
  let body = JSON.stringify(request);
  for (let i = 0; i < 100; i++) {
    const answer = (await post(url, body)) as { status: Record<string, unknown>; resyncAfterSeconds?: number };
    const next = JSON.stringify({ ...request, parent: { ...request.parent, status: { ...answer.status, observedGeneration: 1 } } });
    if (next === body && answer.resyncAfterSeconds === undefined) return body;
    body = next;
    request = JSON.parse(body) as HookRequest;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the application did not settle');
}

async function load(url: string, body: string, options: { connections: number; headers?: Record<string, string> }): Promise<Load> {
  const result = await autocannon({
    url: `${url}/sync`,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    body,
    connections: options.connections,
    duration: DURATION,
  });
  // autocannon counts a 304 as non-2xx: only 5xx and transport errors are failures here.
  return { rps: round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99, errors: result.errors, non2xx: result['5xx'] };
}

function report(title: string, base: Load, mine: Load, etag: Load): void {
  const line = (label: string, l: Load) =>
    `  ${label.padEnd(24)}${l.rps.toFixed(0).padStart(7)} req/s  p50 ${l.p50} ms  p99 ${l.p99} ms  (5xx ${l.non2xx}, errors ${l.errors})`;
  console.log(`\n${title}`);
  console.log(line('ceiling (bare Fastify)', base));
  console.log(line('ours', mine));
  console.log(line('ours, If-None-Match', etag));
  console.log(`  ratio to the ceiling: ${(mine.rps / base.rps * 100).toFixed(1)} % plain, ${(etag.rps / base.rps * 100).toFixed(1)} % with ETag`);
}

async function etagOf(url: string, body: string): Promise<string> {
  const res = await fetch(`${url}/sync`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  await res.arrayBuffer();
  return res.headers.get('etag') ?? '';
}

/** Starts a server process; ours counts as up once /readyz says it reached NATS. */
async function serve(args: string[], env: Record<string, string>): Promise<{ url: string; stop(): Promise<void> }> {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', SHUTDOWN_DELAY_MS: '0', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise((r) => child.on('exit', r));
  const url = `http://127.0.0.1:${port}`;
  const probe = args[0] === 'dist/main.js' ? '/readyz' : '/';
  for (let i = 0; ; i++) {
    const status = await fetch(`${url}${probe}`).then((r) => r.status, () => 0);
    if (status === 200 || (probe === '/' && status > 0)) break;
    if (i > 300 || child.exitCode !== null) throw new Error(`${args.join(' ')} did not start`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url, stop: async () => void (child.kill('SIGTERM'), await exited) };
}

async function post(url: string, body: string): Promise<unknown> {
  const res = await fetch(`${url}/sync`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  if (res.status !== 200) throw new Error(`/sync answered ${res.status}: ${await res.text()}`);
  return res.json();
}

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith(name)).reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
}

async function pool<T>(items: T[], width: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await work(items[next++]!);
  }));
}

function hasRealWadm(): boolean {
  try {
    wadmBinary();
    return true;
  } catch {
    return false;
  }
}

function machine() {
  return { cpus: cpus().length, cpu: cpus()[0]?.model, memoryGiB: round(totalmem() / 2 ** 30), node: process.version, platform: process.platform };
}

/** The run with the median throughput. */
function median(loads: Load[]): Load {
  return [...loads].sort((a, b) => a.rps - b.rps)[Math.floor(loads.length / 2)]!;
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

await main();
