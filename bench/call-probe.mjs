// Loaded into a measured server by the bench's profile only (`node --import ./bench/call-probe.mjs
// …`). The first SIGUSR2 starts V8's CPU profiler and GC profiler; the second stops both and writes
// BENCH_PROBE_DIR/calls.cpuprofile and BENCH_PROBE_DIR/allocation.json. So both cover the measured
// calls only: `node --cpu-prof` covered the whole process, and its start (module compilation, the
// settling calls) was counted as ~3 µs per call more for ours than for the ceiling.
// allocation.json: what the heap allocated in between (each collection's size before it, less the
// size after the one before, plus the growth since the last) and what the collections cost.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { GCProfiler, getHeapStatistics } from 'node:v8';

const dir = process.env.BENCH_PROBE_DIR;
const session = new Session();
session.connect();
const post = (method) => new Promise((resolve, reject) => session.post(method, (err, result) => (err ? reject(err) : resolve(result))));

let profiler;
let usedAtStart = 0;
process.on('SIGUSR2', () => void (profiler ? stop() : start()));

async function start() {
  await post('Profiler.enable');
  await post('Profiler.start');
  profiler = new GCProfiler();
  usedAtStart = getHeapStatistics().used_heap_size;
  profiler.start();
}

async function stop() {
  const { statistics } = profiler.stop();
  profiler = undefined;
  const { profile } = await post('Profiler.stop');
  let allocatedBytes = 0;
  let usedAfterLast = usedAtStart;
  for (const gc of statistics) {
    allocatedBytes += gc.beforeGC.heapStatistics.usedHeapSize - usedAfterLast;
    usedAfterLast = gc.afterGC.heapStatistics.usedHeapSize;
  }
  allocatedBytes += getHeapStatistics().used_heap_size - usedAfterLast;
  const collections = {};
  for (const gc of statistics) collections[gc.gcType] = (collections[gc.gcType] ?? 0) + 1;
  const gcMicros = statistics.reduce((sum, gc) => sum + gc.cost, 0);
  writeFileSync(join(dir, 'calls.cpuprofile'), JSON.stringify(profile));
  // Written last: the bench reads the profile once this file is whole.
  writeFileSync(join(dir, 'allocation.json'), JSON.stringify({ allocatedBytes, collections, gcMicros }));
}
