#!/usr/bin/env node
// wasmcloud-metacontroller [serve] | validate FILE... | render FILE | convert FILE | status NAME --lattice L
import { parseArgs } from 'node:util';
import { convert, render, validate, type Outcome } from './cli/commands.js';
import { status } from './cli/status.js';
import { loadConfig } from './config.js';
import { serve } from './serve.js';

const USAGE = `usage: wasmcloud-metacontroller [command]

  serve                        run the hook service (the default); configured by environment variables
  validate FILE...             run the hook's validation on WasmCloudApplication files (YAML, multi-document,
                               or JSON; - for stdin); exit 1 on any error
  render FILE                  print the exact wadm manifest (JSON) the hook would put, and its version
  convert FILE                 turn wadm (OAM) manifests into WasmCloudApplication resources
  status NAME --lattice L      ask wadm over NATS (NATS_URL, NATS_*) and print the status the hook would write

options:
  -n, --namespace NS           namespace of resources without one (default: default)
  -l, --lattice L              lattice (default: DEFAULT_LATTICE or default)
  -h, --help
`;

async function main(argv: string[]): Promise<Outcome | undefined> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { namespace: { type: 'string', short: 'n' }, lattice: { type: 'string', short: 'l' }, help: { type: 'boolean', short: 'h' } },
  });
  const [command = 'serve', ...args] = positionals;
  if (values.help) return { stdout: USAGE, stderr: '', code: 0 };
  // The image's default command: the same start, configuration errors and exit codes as
  // dist/main.js, so serve reads its configuration itself.
  if (command === 'serve') {
    await serve(process.env);
    return undefined;
  }
  const loaded = loadConfig(process.env);
  if (!loaded.ok) return { stdout: '', stderr: `invalid configuration: ${loaded.errors.join('; ')}\n`, code: 2 };
  const options = { namespace: values.namespace ?? 'default', defaultLattice: loaded.config.defaultLattice };
  const one = (what: string) => (args.length === 1 ? undefined : { stdout: '', stderr: `${command} takes exactly one ${what}\n${USAGE}`, code: 2 });
  switch (command) {
    case 'validate':
      return args.length > 0 ? validate(args, options) : { stdout: '', stderr: `validate needs at least one FILE\n${USAGE}`, code: 2 };
    case 'render':
      return one('FILE') ?? render(args[0]!, options);
    case 'convert':
      return one('FILE') ?? convert(args[0]!, { ...options, namespaceGiven: values.namespace !== undefined });
    case 'status':
      return one('NAME') ?? status(args[0]!, values.lattice ?? loaded.config.defaultLattice, loaded.config);
    default:
      return { stdout: '', stderr: `unknown command "${command}"\n${USAGE}`, code: 2 };
  }
}

try {
  const outcome = await main(process.argv.slice(2));
  if (outcome) {
    process.stdout.write(outcome.stdout);
    process.stderr.write(outcome.stderr);
    process.exitCode = outcome.code;
  }
} catch (err) {
  process.stderr.write(`wasmcloud-metacontroller: ${(err as Error).message}\n`);
  process.exitCode = 2;
}
