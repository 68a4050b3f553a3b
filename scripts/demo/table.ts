// `kubectl get wcapp` for the demo: the columns come from the CRD's additionalPrinterColumns
// (manifests/crd.yaml), so the demo shows what kubectl shows and cannot drift from it. On a
// terminal the table is redrawn in place; elsewhere (CI, a pipe) a row is printed when it changes,
// like `kubectl get --watch`.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';
import type { K8sObject } from '../../test/support/metacontroller.js';

const CRD_FILE = fileURLToPath(new URL('../../manifests/crd.yaml', import.meta.url));
const COLUMN_GAP = 3; // kubectl's tabwriter padding

interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  priority?: number;
}

/** The columns `kubectl get` shows without `-o wide`: the served version's, priority 0. */
export function printerColumns(crdText = readFileSync(CRD_FILE, 'utf8')): PrinterColumn[] {
  const crd = yaml.load(crdText) as { spec: { versions: { served: boolean; additionalPrinterColumns?: PrinterColumn[] }[] } };
  const version = crd.spec.versions.find((v) => v.served);
  return (version?.additionalPrinterColumns ?? []).filter((c) => (c.priority ?? 0) === 0);
}

/**
 * The subset of kubectl's JSONPath the CRD uses: `.a.b` and `[?(@.key=="value")]` on a list.
 * Returns undefined when a step finds nothing (kubectl prints `<none>`).
 */
export function jsonPath(obj: unknown, path: string): unknown {
  let current: unknown = obj;
  for (const [, field, key, value] of path.matchAll(/\.(\w+)|\[\?\(@\.(\w+)=="([^"]*)"\)\]/g)) {
    if (field !== undefined) current = (current as Record<string, unknown> | undefined)?.[field];
    else current = Array.isArray(current) ? current.find((item) => (item as Record<string, unknown>)[key!] === value) : undefined;
    if (current === undefined || current === null) return undefined;
  }
  return current;
}

/** kubectl's short human durations (k8s.io/apimachinery duration.HumanDuration), to minutes. */
export function age(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  return `${minutes}m`;
}

function cell(obj: K8sObject, column: PrinterColumn, now: number): string {
  const value = jsonPath(obj, column.jsonPath);
  if (value === undefined) return '<none>';
  if (column.type === 'date') return age(now - Date.parse(String(value)));
  return String(value);
}

/** The header and one row of cells per object. */
export function tableRows(objects: K8sObject[], now: number, columns = printerColumns()): string[][] {
  return [
    ['NAME', ...columns.map((c) => c.name.toUpperCase())],
    ...objects.map((obj) => [obj.metadata.name, ...columns.map((c) => cell(obj, c, now))]),
  ];
}

/**
 * Rows padded into columns as kubectl does. Given a width, the widest column is cut (with `…`)
 * until the lines fit, so a long STATUS message does not push AGE off a terminal.
 */
export function formatRows(rows: string[][], maxWidth = Infinity): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const total = () => widths.reduce((sum, w) => sum + w + COLUMN_GAP, -COLUMN_GAP);
  while (total() > maxWidth) {
    const widest = widths.indexOf(Math.max(...widths));
    if (widths[widest]! <= 8) break;
    widths[widest]! -= 1;
  }
  const fit = (text: string, width: number) => (text.length <= width ? text : `${text.slice(0, width - 1)}…`);
  return rows.map((row) =>
    row
      .map((text, i) => fit(text, widths[i]!).padEnd(widths[i]! + COLUMN_GAP))
      .join('')
      .trimEnd(),
  );
}

export interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** A table that is redrawn on a terminal and appended to elsewhere; `done()` before printing anything else. */
export class LiveTable {
  private drawn = 0;
  private readonly printed = new Set<string>();
  private readonly columns = printerColumns();

  constructor(private readonly out: Output) {}

  show(objects: K8sObject[], now = Date.now()): void {
    const rows = tableRows(objects, now, this.columns);
    // One column less than the terminal: a line that fills it exactly wraps on some terminals.
    if (this.out.isTTY) this.redraw(formatRows(rows, (this.out.columns ?? 80) - 1));
    else this.append(rows);
  }

  done(): void {
    this.drawn = 0;
    this.printed.clear();
  }

  private redraw(lines: string[]): void {
    // The lines fit the terminal (see show), so moving up `drawn` lines reaches the table's top.
    const up = this.drawn > 0 ? `\x1b[${this.drawn}F` : '';
    this.out.write(`${up}${lines.map((line) => `\x1b[2K${line}\n`).join('')}`);
    this.drawn = lines.length;
  }

  /** The header once, then each row whose cells other than its age are new (`kubectl get --watch`). */
  private append(rows: string[][]): void {
    const lines = formatRows(rows);
    rows.forEach((row, i) => {
      const key = row.filter((_, c) => c === 0 || this.columns[c - 1]?.type !== 'date').join('\t');
      if (this.printed.has(key)) return;
      this.printed.add(key);
      this.out.write(`${lines[i]}\n`);
    });
  }
}
