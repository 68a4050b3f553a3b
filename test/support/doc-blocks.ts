// Commands a page shows, taken from the page itself so that the page and its test cannot drift: the
// fenced block that follows an HTML comment marker (`<!-- install-from-source: … -->`), the
// settings it asks the reader to choose, and the few substitutions a test must make, each of which
// must find its text on the page exactly once.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

/** The body of the fenced block right after `<!-- MARKER` in the file (relative to the repository). */
export function markedBlock(file: string, marker: string): string {
  const page = readFileSync(resolve(ROOT, file), 'utf8');
  const at = page.indexOf(`<!-- ${marker}`);
  assert.ok(at >= 0, `${file} has no <!-- ${marker} --> marker`);
  assert.equal(page.indexOf(`<!-- ${marker}`, at + 1), -1, `${file} has the marker ${marker} twice`);
  const block = /^[^\n]*-->\n```(?:sh|bash)\n([\s\S]*?)\n```\n/.exec(page.slice(at));
  assert.ok(block, `in ${file}, the marker ${marker} is not followed by a sh block`);
  return `${block[1]!}\n`;
}

/** The settings a block asks the reader to choose: its lines `NAME=value   # what to put there`. */
export function settingsOf(block: string): string[] {
  return [...block.matchAll(/^([A-Z_]+)=\S+ +# /gm)].map((m) => m[1]!);
}

export interface Substitution {
  /** The page's text (a string, or a pattern for a whole line); it must occur exactly once. */
  from: string | RegExp;
  to: string;
  /** Why the test cannot run it as written. */
  why: string;
}

/** The block with each substitution made; fails, naming it, when one does not find its text exactly once. */
export function substituted(block: string, substitutions: Substitution[]): string {
  let text = block;
  for (const { from, to, why } of substitutions) {
    const pattern = typeof from === 'string' ? new RegExp(from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'g') : new RegExp(from, 'gm');
    const found = text.match(pattern)?.length ?? 0;
    assert.equal(found, 1, `the page has ${found} times, not once, what the test changes: ${String(from)} (${why})`);
    text = text.replace(pattern, () => to);
  }
  return text;
}

export interface BlockRun {
  /** Resolves when bash exits: its code, its stdout, and its output (stdout and stderr with the xtrace, interleaved). */
  done: Promise<{ code: number | null; stdout: string; output: string }>;
  exited(): boolean;
  /** What it printed so far. */
  output(): string;
}

/**
 * Runs a block through one bash, each line as written (`set -euo pipefail`: the first failing
 * command ends it; `set -x`: each command is echoed before it runs), asynchronously, so that the
 * test plays the cluster's other actors meanwhile.
 */
export function runBlock(block: string, options: { cwd: string; env: Record<string, string> }): BlockRun {
  const child = spawn('bash', ['-c', `set -euo pipefail -x\n${block}`], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stdout = '';
  let exited = false;
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const done = new Promise<{ code: number | null; stdout: string; output: string }>((resolveRun) =>
    child.once('close', (code) => {
      exited = true;
      resolveRun({ code, stdout, output });
    }),
  );
  return { done, exited: () => exited, output: () => output };
}
