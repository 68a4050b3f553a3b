// No promise in src/ is left without a rejection handler: a rejection nothing handles ends a Node
// process by default, and with it every hook call (issue 27: one subscription NATS refused did
// that). The checker uses TypeScript's type checker over the real sources; a small program with
// known mistakes shows that it finds each kind.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { findFloatingPromises } from '../support/floating-promises.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = join(ROOT, 'src') + sep;

function programOf(rootNames: string[], files?: Record<string, string>): ts.Program {
  const options: ts.CompilerOptions = {
    strict: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noEmit: true,
    types: ['node'],
  };
  const host = ts.createCompilerHost(options);
  if (files) {
    const read = host.readFile.bind(host);
    const exists = host.fileExists.bind(host);
    host.readFile = (name) => files[name] ?? read(name);
    host.fileExists = (name) => name in files || exists(name);
    const getSource = host.getSourceFile.bind(host);
    host.getSourceFile = (name, version) =>
      name in files ? ts.createSourceFile(name, files[name]!, version, true) : getSource(name, version);
  }
  return ts.createProgram(rootNames, options, host);
}

describe('promises in src/', () => {
  it('every one is awaited, returned or has a rejection handler', () => {
    const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile);
    const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
    const sources = parsed.fileNames.filter((f) => f.startsWith(SRC));
    assert.ok(sources.length > 50, `${sources.length} source files found`);
    const findings = findFloatingPromises(
      ts.createProgram(sources, parsed.options),
      (f) => f.startsWith(SRC.split(sep).join('/')) || f.startsWith(SRC),
    );
    assert.deepEqual(
      findings.map((f) => `${f.file.slice(ROOT.length + 1)}:${f.line} ${f.rule}: ${f.text}`),
      [],
    );
  });

  it('the checker finds a floating call, a voided one and an async listener, and accepts handled ones', () => {
    const file = join(ROOT, 'test', '__promises_sample__.ts');
    const sample = [
      'import { EventEmitter } from "node:events";',
      'async function work(): Promise<number> { return 1; }',
      'export async function main(emitter: EventEmitter): Promise<void> {',
      '  work();', // floating
      '  void work();', // floating: void hides it
      '  emitter.on("x", async () => { await work(); });', // misused
      '  work().catch(() => undefined);',
      '  work().then(() => undefined, () => undefined);',
      '  await work();',
      '  void work().catch(() => undefined);',
      '  setTimeout(() => { work().catch(() => undefined); }, 1);',
      '}',
    ].join('\n');
    const findings = findFloatingPromises(programOf([file], { [file]: sample }), (f) => f === file);
    assert.deepEqual(
      findings.map((f) => [f.line, f.rule]),
      [
        [4, 'floating'],
        [5, 'floating'],
        [6, 'misused'],
      ],
    );
  });
});
