// What a heap holds more of in one snapshot than in another, per unit (an application):
//   node bench/heap-diff.mjs IDLE.heapsnapshot LOADED.heapsnapshot [UNITS] [TOP]
// Objects are grouped by constructor and their first property names, strings by their start
// (digits and hex runs folded), the rest by V8's node type and name. Prints count and bytes per
// unit, largest first. Snapshots come from BENCH_HEAP_SNAPSHOT_DIR (see bench/run.ts).
import { readFileSync } from 'node:fs';

const [idleFile, loadedFile, unitsText = '1', topText = '25'] = process.argv.slice(2);
const units = Number(unitsText);

function groups(file) {
  const snapshot = JSON.parse(readFileSync(file, 'utf8'));
  const {
    node_fields: nodeFields,
    edge_fields: edgeFields,
    node_types: [nodeTypes],
    edge_types: [edgeTypes],
  } = snapshot.snapshot.meta;
  const { nodes, edges, strings } = snapshot;
  const [typeAt, nameAt, sizeAt, edgeCountAt] = ['type', 'name', 'self_size', 'edge_count'].map((f) => nodeFields.indexOf(f));
  const [edgeTypeAt, edgeNameAt] = ['type', 'name_or_index'].map((f) => edgeFields.indexOf(f));
  const result = new Map();
  let edge = 0;
  for (let n = 0; n < nodes.length; n += nodeFields.length) {
    const type = nodeTypes[nodes[n + typeAt]];
    const name = strings[nodes[n + nameAt]];
    const edgeCount = nodes[n + edgeCountAt];
    let key;
    if (type === 'object') {
      const props = [];
      for (let e = edge; e < edge + edgeCount * edgeFields.length && props.length < 5; e += edgeFields.length) {
        if (edgeTypes[edges[e + edgeTypeAt]] === 'property') props.push(strings[edges[e + edgeNameAt]]);
      }
      key = `${name} {${props.join(',')}}`;
    } else if (type === 'string' || type === 'concatenated string' || type === 'sliced string') {
      key = `${type} "${name
        .slice(0, 28)
        .replace(/[0-9a-f]{6,}/gi, '#')
        .replace(/\d+/g, 'N')}"`;
    } else {
      key = `(${type}) ${name.slice(0, 40)}`;
    }
    edge += edgeCount * edgeFields.length;
    const group = result.get(key) ?? { count: 0, bytes: 0 };
    group.count++;
    group.bytes += nodes[n + sizeAt];
    result.set(key, group);
  }
  return result;
}

const idle = groups(idleFile);
const loaded = groups(loadedFile);
const rows = [...loaded].map(([key, g]) => ({
  key,
  count: (g.count - (idle.get(key)?.count ?? 0)) / units,
  bytes: (g.bytes - (idle.get(key)?.bytes ?? 0)) / units,
}));
rows.sort((a, b) => b.bytes - a.bytes);
const total = rows.reduce((sum, r) => sum + r.bytes, 0);
console.log(`per unit (${units}): ${total.toFixed(0)} bytes more in ${loadedFile} than in ${idleFile}`);
console.log('| bytes | objects | what |\n|---:|---:|---|');
for (const r of rows.slice(0, Number(topText)))
  console.log(`| ${r.bytes.toFixed(0)} | ${r.count.toFixed(2)} | ${r.key.replace(/\|/g, '\\|')} |`);
