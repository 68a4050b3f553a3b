// `npm run demo`, the README's first command, run as a user runs it (its own process, output to a
// pipe as in CI): every step must happen and it must end with exit 0; with --keep it must leave a
// service that answers until Ctrl-C, then stop everything cleanly. And its `kubectl get wcapp`
// table must be the CRD's printer columns.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import yaml from 'js-yaml';
import { formatRows, jsonPath, LiveTable, printerColumns, tableRows } from '../../scripts/demo/table.js';
import type { K8sObject } from '../support/metacontroller.js';
import { until } from '../support/wait.js';

const ROOT = resolve(import.meta.dirname, '../..');

interface Demo {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

function startDemo(args: string[] = []): Demo {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  return { child, output: () => out, exited };
}

describe('npm run demo', () => {
  it('applies, edits, reverts and deletes hello-world through the built service, and exits 0', async () => {
    const demo = startDemo();
    const code = await demo.exited;
    const out = demo.output();
    assert.equal(code, 0, out);
    const ready = /Ready: default\/hello-world runs version (sha-[0-9a-f]{16})/.exec(out);
    assert.ok(ready, out);
    const edited = /new version (sha-[0-9a-f]{16}) is Ready \(was (sha-[0-9a-f]{16})\)/.exec(out);
    assert.ok(edited, out);
    assert.notEqual(edited[1], ready[1]);
    assert.equal(edited[2], ready[1]);
    assert.match(out, new RegExp(`version ${ready[1]} is Ready again`));
    assert.match(out, /finalized: the finalize hook deleted hello-world from wadm .* runs nothing/);
    // Piped output is lines, never cursor movements; the table's rows show the live states.
    assert.doesNotMatch(out, /\x1b\[/);
    assert.match(out, /^NAME +LATTICE +VERSION +READY +STATUS +AGE$/m);
    assert.match(out, new RegExp(`^hello-world +default +${ready[1]} +True +Version ${ready[1]} is deployed +\\d+s$`, 'm'));
    // The pinned binaries, the build, and no stack trace anywhere.
    assert.match(out, /nats-server: found cached v2\.11\.17|nats-server: installed v2\.11\.17/);
    assert.match(out, /service: (dist\/ is up to date|built dist\/)/);
    assert.match(out, /service: node dist\/main\.js, listening on http:\/\/127\.0\.0\.1:\d+/);
    assert.doesNotMatch(out, /\n\s+at /);
  });

  it('with --keep serves until Ctrl-C, then stops every child and exits 0', async () => {
    const demo = startDemo(['--keep']);
    const readyz = await until(
      () => /http:\/\/127\.0\.0\.1:\d+\/readyz/.exec(demo.output())?.[0] ?? (demo.child.exitCode !== null && 'exited'),
      {
        what: () => `the demo to print its URLs:\n${demo.output()}`,
        timeoutMs: 300_000,
        intervalMs: 100,
      },
    );
    assert.notEqual(readyz, 'exited', demo.output());
    assert.equal((await fetch(readyz)).status, 200);
    // The printed curl command calls the sync hook with a body that exists and is accepted.
    const curl = /curl -s -H 'Content-Type: application\/json' --data @(\S+) (http:\S+\/sync)/.exec(demo.output());
    assert.ok(curl, demo.output());
    const answer = await fetch(curl[2]!, { method: 'POST', headers: { 'content-type': 'application/json' }, body: readFileSync(curl[1]!) });
    assert.equal(answer.status, 200);
    assert.equal(((await answer.json()) as { status: { version: string } }).status.version, 'sha-72ddc1eef3fe1252');

    demo.child.kill('SIGINT');
    assert.equal(await demo.exited, 0, demo.output());
    assert.match(demo.output(), /Ctrl-C: stopping everything/);
    // Every child is gone: the service's port no longer answers.
    await assert.rejects(fetch(readyz));
  });
});

describe('the demo table', () => {
  const crd = readFileSync(resolve(ROOT, 'manifests/crd.yaml'), 'utf8');
  const app = {
    apiVersion: 'core.wasmcloud.com/v1beta1',
    kind: 'WasmCloudApplication',
    metadata: { name: 'hello-world', namespace: 'default', creationTimestamp: '2026-12-01T00:00:00Z' },
    status: {
      lattice: 'default',
      version: 'sha-1',
      phase: 'Deployed',
      conditions: [
        { type: 'Reconciling', status: 'False' },
        { type: 'Ready', status: 'True', message: 'Version sha-1 is deployed' },
      ],
    },
  } satisfies K8sObject;

  it('has the columns kubectl get shows for the CRD (priority 0), in its order', () => {
    const columns = (
      yaml.load(crd) as { spec: { versions: { additionalPrinterColumns: { name: string; priority?: number }[] }[] } }
    ).spec.versions[0]!.additionalPrinterColumns.filter((c) => !c.priority).map((c) => c.name.toUpperCase());
    assert.deepEqual(tableRows([app], 0)[0], ['NAME', ...columns]);
    assert.deepEqual(
      printerColumns().map((c) => c.name),
      printerColumns(crd).map((c) => c.name),
    );
  });

  it('reads the printer columns as kubectl does, ages included', () => {
    const now = Date.parse('2026-12-01T00:02:05Z');
    assert.deepEqual(tableRows([app], now)[1], ['hello-world', 'default', 'sha-1', 'True', 'Version sha-1 is deployed', '2m5s']);
    assert.equal(jsonPath(app, '.status.conditions[?(@.type=="Stalled")].status'), undefined);
    assert.equal(tableRows([{ ...app, status: {} }], now)[1]![1], '<none>');
  });

  it('fits a terminal by cutting the widest column, keeping AGE', () => {
    const lines = formatRows(tableRows([app], Date.parse('2026-12-01T00:00:07Z')), 60);
    assert.ok(
      lines.every((line) => line.length <= 60),
      lines.join('\n'),
    );
    assert.match(lines[1]!, /… +7s$/);
  });

  it('redraws in place on a terminal and appends only changed rows elsewhere', () => {
    const written: string[] = [];
    const start = Date.parse('2026-12-01T00:00:00Z');
    const later = { ...app, status: { ...app.status, version: 'sha-2' } };
    const terminal = new LiveTable({ write: (text) => written.push(text), isTTY: true, columns: 60 });
    terminal.show([app], start);
    terminal.show([later], start + 1000);
    assert.doesNotMatch(written[0]!, /\x1b\[\d+F/, 'nothing to move up over at first');
    assert.match(written[1]!, /^\x1b\[2F/, 'back over the header and the row');
    assert.ok(
      written
        .join('')
        .split('\n')
        .every((line) => line.replace(/\x1b\[\d*[A-Z]/g, '').length < 60),
    );

    const piped: string[] = [];
    const lines = new LiveTable({ write: (text) => piped.push(text) });
    lines.show([app], start);
    lines.show([app], start + 5000); // only the age changed
    lines.show([later], start + 6000);
    assert.deepEqual(
      piped.map((line) => line.split(/ +/)[0]),
      ['NAME', 'hello-world', 'hello-world'],
    );
    assert.match(piped[2]!, /sha-2/);
  });
});
