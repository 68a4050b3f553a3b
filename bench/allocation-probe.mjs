// Loaded into a measured server by the bench's profile only (`node --import
// ./bench/allocation-probe.mjs …`): the first SIGUSR2 starts V8's GC profiler, the second writes to
// BENCH_ALLOCATION_FILE what the heap allocated in between (each collection's size before it, less
// the size after the one before, plus the growth since the last) and what the collections cost.
import { writeFileSync } from 'node:fs';
import { GCProfiler, getHeapStatistics } from 'node:v8';

let profiler;
let usedAtStart = 0;
process.on('SIGUSR2', () => {
  if (!profiler) {
    profiler = new GCProfiler();
    usedAtStart = getHeapStatistics().used_heap_size;
    return void profiler.start();
  }
  const { statistics } = profiler.stop();
  profiler = undefined;
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
  writeFileSync(process.env.BENCH_ALLOCATION_FILE, JSON.stringify({ allocatedBytes, collections, gcMicros }));
});
