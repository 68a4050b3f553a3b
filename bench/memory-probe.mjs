// Loaded into the service by the bench only (`node --expose-gc --import ./bench/memory-probe.mjs
// dist/main.js`): on SIGUSR2 it writes the memory in use as found, then again after a forced
// full GC, to BENCH_PROBE_FILE; with BENCH_HEAP_SNAPSHOT_DIR set, it also writes a heap snapshot
// (after the GC) there, numbered by reading. The service itself never forces a GC.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapSpaceStatistics, getHeapStatistics, writeHeapSnapshot } from 'node:v8';

const file = process.env.BENCH_PROBE_FILE;
const snapshots = process.env.BENCH_HEAP_SNAPSHOT_DIR;
let readings = 0;
const usage = () => {
  const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
  return { rss, heapUsed, heapTotal, external, arrayBuffers };
};

/** Linux: resident bytes by kind of mapping (malloc's brk heap, other anonymous memory, files). */
function residentByKind() {
  let text;
  try {
    text = readFileSync('/proc/self/smaps', 'utf8');
  } catch {
    return undefined;
  }
  const kinds = { mallocBrk: 0, anonymous: 0, files: 0 };
  let kind = 'anonymous';
  for (const line of text.split('\n')) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping) kind = mapping[1] === '[heap]' ? 'mallocBrk' : mapping[1].startsWith('/') ? 'files' : 'anonymous';
    else if (line.startsWith('Rss:')) kinds[kind] += Number(line.split(/\s+/)[1]) * 1024;
  }
  return kinds;
}

/** V8's heap by space: committed (space_size) and used bytes, to tell the young generation from the old. */
function heapSpaces() {
  return Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, { committed: s.space_size, used: s.space_used_size }]));
}

process.on('SIGUSR2', () => {
  const found = usage();
  // Twice: the first collection may leave objects that only finalizers of the first free.
  globalThis.gc();
  globalThis.gc();
  const afterGc = { ...usage(), v8Malloced: getHeapStatistics().malloced_memory, resident: residentByKind(), spaces: heapSpaces() };
  const snapshot = snapshots ? writeHeapSnapshot(join(snapshots, `reading-${++readings}.heapsnapshot`)) : undefined;
  writeFileSync(`${file}.tmp`, JSON.stringify({ found, afterGc, snapshot }));
  renameSync(`${file}.tmp`, file);
});
