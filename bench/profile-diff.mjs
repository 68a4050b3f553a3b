// Where a server spends more per request than the ceiling: compares two CPU profiles (bench/call-probe.mjs
// takes them) over the same number of requests, by function, in microseconds per request.
// Usage: node bench/profile-diff.mjs CEILING.cpuprofile OURS.cpuprofile REQUESTS [ROWS]
// Functions are matched by name (and Node's module for Node's own), so that a bundled dist/main.js
// compares with Fastify loaded from node_modules. (idle) is time the process waited, not cost.
import { readFileSync } from 'node:fs';

const [ceilingFile, oursFile, requests, rows = '40'] = process.argv.slice(2);
if (!oursFile || !Number(requests)) {
  console.error('usage: node bench/profile-diff.mjs CEILING.cpuprofile OURS.cpuprofile REQUESTS [ROWS]');
  process.exit(2);
}

/** Self time per function name, in µs per request. */
function selfTimes(file) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byNode = new Map();
  profile.samples.forEach((id, i) => byNode.set(id, (byNode.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const byName = new Map();
  for (const { id, callFrame } of profile.nodes) {
    const micros = byNode.get(id);
    if (!micros) continue;
    const name = `${callFrame.url.startsWith('node:') ? `${callFrame.url}:` : ''}${callFrame.functionName || '(anonymous)'}`;
    byName.set(name, (byName.get(name) ?? 0) + micros / Number(requests));
  }
  return byName;
}

const [ceiling, ours] = [selfTimes(ceilingFile), selfTimes(oursFile)];
const busy = (times) => [...times].reduce((sum, [name, t]) => (name === '(idle)' ? sum : sum + t), 0);
console.log(
  `busy µs per request: ceiling ${busy(ceiling).toFixed(1)}, ours ${busy(ours).toFixed(1)} (${((busy(ceiling) / busy(ours)) * 100).toFixed(0)} %)`,
);
console.log('  more   ceiling    ours  function');
const names = [...new Set([...ceiling.keys(), ...ours.keys()])].filter((name) => name !== '(idle)');
const diffs = names.map((name) => [name, ceiling.get(name) ?? 0, ours.get(name) ?? 0]).sort((a, b) => b[2] - b[1] - (a[2] - a[1]));
for (const [name, c, o] of diffs.slice(0, Number(rows)))
  console.log(`${(o - c).toFixed(2).padStart(6)} ${c.toFixed(2).padStart(9)} ${o.toFixed(2).padStart(7)}  ${name}`);
