// The command line: `wasmcloud-metacontroller [command]`. Parses arguments and runs one command as
// a function from arguments to (output, exit code); `serve` is handed back to src/main.ts, which
// owns the process.
import { parseArgs } from 'node:util';
import type { Config } from '../plumbing/config.js';
import type { Outcome } from './commands.js';

// The commands are loaded when one runs (the dynamic imports below): the service (`serve`) never
// needs them, and they bring their own compiled schemas (the whole parent, v2 workloads), YAML and
// the v2 converter.

export const USAGE = `usage: wasmcloud-metacontroller [command]

  serve                        run the hook service (the default); configured by environment variables
  validate FILE...             run the hook's validation on the WasmCloudApplications of the files (YAML,
                               multi-document, or JSON; - for stdin, e.g. kubectl kustomize output); other
                               kinds are skipped and counted; unknown trait types are warnings; exit 1 on
                               any error, including a rendered manifest larger than --max-payload BYTES
                               (default 1048576, NATS's default max_payload)
  render FILE                  print the exact wadm manifest (JSON) the hook would put, and its version
  convert FILE [--adopt]       turn wadm (OAM) manifests into WasmCloudApplication resources; with --adopt,
                               resources that take over the applications wash deployed in --lattice L
                               (annotated core.wasmcloud.com/adopt, spec.lattice set, the version not pinned)
  convert FILE --to v2         turn WasmCloudApplications or wadm manifests into wasmCloud v2 WorkloadDeployments
                               (YAML on stdout) with a report of every loss on stderr; exit 0 when the output
                               runs as converted (mapped or approximated), 3 when something was dropped or needs
                               input, 1 when invalid
  status NAME [--lattice L]    ask wadm over NATS (NATS_URL, NATS_*) and print the status the hook would write;
                               exit 1 when wadm has no such application, 2 when NATS or wadm cannot be reached
  diff FILE [--lattice L]      what applying the file would change in wadm: the rendered manifest against the
                               deployed version's, as a unified diff (the lattice: the resource's own); exit 0
                               when equal, 1 when different, 2 when the file is invalid or NATS or wadm cannot
                               be reached
  list [--lattice L]           the lattice's models with their deployed version and owner (or unowned); exit 2
                               when NATS or wadm cannot be reached, or the lattice is too large for wadm to list
  hosts [--lattice L] [--listen S]
                               the lattice's hosts as their heartbeats say (name, id, version, uptime, what they
                               run, labels), heard for S seconds (default 35; hosts heartbeat every 30 s); exit 1
                               when none heartbeat, 2 when NATS cannot be reached or refuses the heartbeat subjects

options:
  -n, --namespace NS           namespace of resources without one (default: default)
  -l, --lattice L              lattice (default: DEFAULT_LATTICE or default)
      --listen S               hosts: how many seconds to listen to the heartbeats (default 35)
      --adopt                  convert: make resources that adopt what runs in the lattice (see convert)
      --http-host H            convert --to v2: the Host header that routes incoming HTTP to the workload
      --allow-host H           convert --to v2: a host components may call over HTTP (repeatable; * for any)
      --blobstore-bucket NAME  convert --to v2: a blobstore container the workload may use (repeatable)
      --hostgroup-from-requirement KEY
                               convert --to v2: select hosts by host group, named by the spread requirement KEY
  -V, --version                print the version and exit
      --strict                 validate: unknown trait types are errors
  -h, --help
`;

export type Invocation =
  | { command: 'serve' }
  | { command: 'help' }
  | { command: 'version' }
  | { command: 'run'; run: (config: Config) => Promise<Outcome> | Outcome };

/** Any of these makes `convert` the v2 conversion (which then asks for --to v2). */
const V2_FLAGS = ['to', 'http-host', 'allow-host', 'blobstore-bucket', 'hostgroup-from-requirement'] as const;

const fail = (message: string): Invocation => ({ command: 'run', run: () => ({ stdout: '', stderr: message, code: 2 }) });

/** What the arguments ask for; commands run later, with the configuration main has loaded. */
export function parseCommandLine(argv: string[]): Invocation {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        namespace: { type: 'string', short: 'n' },
        lattice: { type: 'string', short: 'l' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'V' },
        strict: { type: 'boolean' },
        adopt: { type: 'boolean' },
        to: { type: 'string' },
        'http-host': { type: 'string' },
        'allow-host': { type: 'string', multiple: true },
        'blobstore-bucket': { type: 'string', multiple: true },
        'hostgroup-from-requirement': { type: 'string' },
        'max-payload': { type: 'string' },
        listen: { type: 'string' },
      },
    });
  } catch (err) {
    return fail(`${(err as Error).message}\n${USAGE}`);
  }
  const { positionals, values } = parsed;
  const [command = 'serve', ...args] = positionals;
  if (values.help) return { command: 'help' };
  if (values.version) return { command: 'version' };
  const options = (config: Config) => ({ namespace: values.namespace ?? 'default', defaultLattice: config.defaultLattice });
  const one = (what: string, then: Invocation): Invocation =>
    args.length === 1 ? then : fail(`${command} takes exactly one ${what}\n${USAGE}`);
  switch (command) {
    case 'serve':
      return { command: 'serve' };
    case 'validate': {
      const maxPayload = values['max-payload'];
      if (maxPayload !== undefined && !/^[1-9]\d*$/.test(maxPayload))
        return fail(`--max-payload must be a number of bytes, got "${maxPayload}"\n${USAGE}`);
      if (args.length === 0) return fail(`validate needs at least one FILE\n${USAGE}`);
      const maxPayloadBytes = maxPayload === undefined ? undefined : Number(maxPayload);
      return {
        command: 'run',
        run: async (config) =>
          (await import('./validate.js')).validate(args, {
            ...options(config),
            strict: values.strict ?? false,
            ...(maxPayloadBytes ? { maxPayloadBytes } : {}),
          }),
      };
    }
    case 'render':
      return one('FILE', { command: 'run', run: async (config) => (await import('./commands.js')).render(args[0]!, options(config)) });
    case 'convert':
      if (V2_FLAGS.some((flag) => values[flag] !== undefined)) {
        if (values.adopt) return fail(`--adopt makes resources for this service; it does not apply to --to v2\n${USAGE}`);
        const v2 = {
          to: values.to ?? '',
          namespaceGiven: values.namespace,
          httpHost: values['http-host'],
          allowHosts: values['allow-host'] ?? [],
          blobstoreBuckets: values['blobstore-bucket'] ?? [],
          hostgroupFromRequirement: values['hostgroup-from-requirement'],
        };
        return one('FILE', {
          command: 'run',
          run: async (config) => (await import('./convert-v2.js')).convertTo(args[0]!, { ...options(config), ...v2 }),
        });
      }
      return one('FILE', {
        command: 'run',
        run: async (config) =>
          (await import('./commands.js')).convert(args[0]!, {
            ...options(config),
            namespaceGiven: values.namespace !== undefined,
            ...(values.adopt ? { adoptIn: values.lattice ?? config.defaultLattice } : {}),
          }),
      });
    case 'status':
      return one('NAME', {
        command: 'run',
        run: async (config) => (await import('./status.js')).status(args[0]!, values.lattice ?? config.defaultLattice, config),
      });
    case 'diff':
      return one('FILE', {
        command: 'run',
        run: async (config) => (await import('./lattice-views.js')).diff(args[0]!, values.lattice, options(config), config),
      });
    case 'list':
      return args.length === 0
        ? {
            command: 'run',
            run: async (config) => (await import('./lattice-views.js')).list(values.lattice ?? config.defaultLattice, config),
          }
        : fail(`list takes no arguments\n${USAGE}`);
    case 'hosts': {
      // Long enough to hear every host once: a heartbeat period and a little.
      const listen = values.listen ?? '35';
      if (!/^\d+$/.test(listen) || Number(listen) < 1 || Number(listen) > 600)
        return fail(`--listen must be a number of seconds from 1 to 600, got "${listen}"\n${USAGE}`);
      return args.length === 0
        ? {
            command: 'run',
            run: async (config) => (await import('./hosts.js')).hosts(values.lattice ?? config.defaultLattice, Number(listen), config),
          }
        : fail(`hosts takes no arguments\n${USAGE}`);
    }
    default:
      return fail(`unknown command "${command}"\n${USAGE}`);
  }
}
