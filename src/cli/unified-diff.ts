// A unified diff (as `diff -u`) of two texts, line by line, with 3 lines of context. Manifests are
// a few hundred lines at most, so the plain longest-common-subsequence table is cheap enough.
const CONTEXT = 3;

type Edit = { op: ' ' | '-' | '+'; line: string };

export function unifiedDiff(before: string, after: string, fromLabel: string, toLabel: string): string {
  if (before === after) return '';
  const edits = lineEdits(splitLines(before), splitLines(after));
  const out = [`--- ${fromLabel}`, `+++ ${toLabel}`];
  for (const hunk of hunks(edits)) out.push(...hunk);
  return out.join('\n') + '\n';
}

function splitLines(text: string): string[] {
  return text === '' ? [] : text.replace(/\n$/, '').split('\n');
}

function lineEdits(a: string[], b: string[]): Edit[] {
  // common[i][j]: length of the longest common subsequence of a[i..] and b[j..].
  const common = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      common[i]![j] = a[i] === b[j] ? common[i + 1]![j + 1]! + 1 : Math.max(common[i + 1]![j]!, common[i]![j + 1]!);
  const edits: Edit[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) (edits.push({ op: ' ', line: a[i++]! }), j++);
    // Removals before additions at the same place, as diff -u prints them.
    else if (i < a.length && (j === b.length || common[i + 1]![j]! >= common[i]![j + 1]!)) edits.push({ op: '-', line: a[i++]! });
    else edits.push({ op: '+', line: b[j++]! });
  }
  return edits;
}

/** Groups changes with their context into `@@ -l,n +l,n @@` hunks, merging hunks that touch. */
function hunks(edits: Edit[]): string[][] {
  const changed = edits.map((e, k) => (e.op === ' ' ? -1 : k)).filter((k) => k >= 0);
  const ranges: [number, number][] = [];
  for (const k of changed) {
    const last = ranges[ranges.length - 1];
    if (last && k - CONTEXT <= last[1]) last[1] = Math.min(edits.length, k + CONTEXT + 1);
    else ranges.push([Math.max(0, k - CONTEXT), Math.min(edits.length, k + CONTEXT + 1)]);
  }
  return ranges.map(([start, end]) => {
    const before = edits.slice(0, start);
    const slice = edits.slice(start, end);
    const oldStart = before.filter((e) => e.op !== '+').length;
    const newStart = before.filter((e) => e.op !== '-').length;
    const oldCount = slice.filter((e) => e.op !== '+').length;
    const newCount = slice.filter((e) => e.op !== '-').length;
    const header = `@@ -${oldCount === 0 ? oldStart : oldStart + 1},${oldCount} +${newCount === 0 ? newStart : newStart + 1},${newCount} @@`;
    return [header, ...slice.map((e) => e.op + e.line)];
  });
}
