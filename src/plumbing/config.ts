// Configuration from the environment, read once by main. Every variable is declared here with
// its default and meaning; docs/configuration.md's table and the Deployment's env are checked
// against it.
import { isSubjectToken } from '../schema/kit.js';

export interface Config {
  port: number;
  host: string;
  natsServers: string[];
  defaultLattice: string;
  wadmApiPrefix: string;
  wadmTimeoutMs: number;
  /** Metacontroller's timeout for our hooks: every call ends a second before it. */
  hookTimeoutMs: number;
  /** How long a replica cut off from NATS stays out of the Service before it answers the outage. */
  natsOutageGraceMs: number;
  /** `host:port` of the other replicas (a headless Service's name resolves to each). */
  peers: string[];
  logLevel: string;
  logFormat: 'json' | 'pretty' | undefined;
  bodyLimitBytes: number;
  /** NATS authentication and TLS: paths of mounted Secret files, read at every (re)connect. */
  natsCredsFile: string | undefined;
  natsNkeySeedFile: string | undefined;
  natsUser: string | undefined;
  natsPasswordFile: string | undefined;
  natsTokenFile: string | undefined;
  natsTlsCaFile: string | undefined;
  natsTlsCertFile: string | undefined;
  natsTlsKeyFile: string | undefined;
  /** Hook security and tenancy. */
  hookBearerTokenFile: string | undefined;
  tlsCertFile: string | undefined;
  tlsKeyFile: string | undefined;
  latticePolicyFile: string | undefined;
  latticePolicyStrict: boolean;
  maxConcurrentHooks: number;
  /** Undefined: an eighth of V8's heap limit (build.ts). */
  hookBytesInFlight: number | undefined;
  shutdownDelayMs: number;
  modelCacheTtlSeconds: number;
  cacheEntries: number;
}

interface Variable<K extends keyof Config> {
  key: K;
  /** The environment variable. */
  env: string;
  /** '' for an optional setting. */
  default: string;
  description: string;
  parse(raw: string): Config[K] | Error;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function integer(min: number, max: number) {
  return (raw: string): number | Error => {
    const value = Number(raw);
    return /^\d+$/.test(raw) && value >= min && value <= max ? value : new Error(`must be an integer from ${min} to ${max}`);
  };
}

/** A Go duration as Metacontroller's webhook `timeout` takes it (`10s`, `1m30s`, `2500ms`), in ms. */
function duration(minMs: number, maxMs: number) {
  const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  return (raw: string): number | Error => {
    const parts = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/.test(raw) ? [...raw.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)] : [];
    const ms = parts.reduce((sum, [, amount, unit]) => sum + Number(amount) * UNITS[unit!]!, 0);
    return parts.length > 0 && ms >= minMs && ms <= maxMs
      ? ms
      : new Error(`must be a duration such as 10s or 1m30s, from ${minMs / 1000}s to ${maxMs / 1000}s`);
  };
}

function natsServers(raw: string): string[] | Error {
  const servers = raw.split(',').map((s) => s.trim());
  const bad = servers.find((s) => !isNatsServer(s));
  return bad === undefined ? servers : new Error(`has an entry that is not a NATS URL or host:port: "${bad}"`);
}

function isNatsServer(entry: string): boolean {
  if (!entry.includes('://')) return /^[\w.-]+(:\d{1,5})?$/.test(entry);
  try {
    return ['nats:', 'tls:'].includes(new URL(entry).protocol);
  } catch {
    return false;
  }
}

function optional<K extends keyof Config>(key: K, env: string, description: string): Variable<K> {
  return { key, env, default: '', description, parse: (raw) => (raw === '' ? undefined : raw) as Config[K] };
}

const NATS_SECURITY = {
  natsCredsFile: optional('natsCredsFile', 'NATS_CREDS_FILE', 'NATS credentials file (user JWT and nkey seed), e.g. from `nsc`.'),
  natsNkeySeedFile: optional('natsNkeySeedFile', 'NATS_NKEY_SEED_FILE', 'File holding an nkey user seed (`SU...`).'),
  natsUser: optional('natsUser', 'NATS_USER', 'NATS user name; the password comes from NATS_PASSWORD_FILE.'),
  natsPasswordFile: optional('natsPasswordFile', 'NATS_PASSWORD_FILE', 'File holding the password of NATS_USER.'),
  natsTokenFile: optional('natsTokenFile', 'NATS_TOKEN_FILE', 'File holding a NATS authentication token.'),
  natsTlsCaFile: optional('natsTlsCaFile', 'NATS_TLS_CA_FILE', 'CA bundle to verify the NATS server; setting it requires TLS.'),
  natsTlsCertFile: optional('natsTlsCertFile', 'NATS_TLS_CERT_FILE', 'Client certificate for NATS mutual TLS (with NATS_TLS_KEY_FILE).'),
  natsTlsKeyFile: optional('natsTlsKeyFile', 'NATS_TLS_KEY_FILE', 'Private key of NATS_TLS_CERT_FILE.'),
};

export const VARIABLES = {
  port: {
    key: 'port',
    env: 'PORT',
    default: '8080',
    description: 'HTTP port of the hook server.',
    parse: integer(1, 65535),
  },
  host: {
    key: 'host',
    env: 'HOST',
    default: '0.0.0.0',
    description: 'Address the hook server listens on.',
    parse: (raw) => (raw.length > 0 ? raw : new Error('must not be empty')),
  },
  natsServers: {
    key: 'natsServers',
    env: 'NATS_URL',
    default: 'nats://127.0.0.1:4222',
    description: 'NATS server URLs, comma-separated (`nats://` or `tls://`).',
    parse: natsServers,
  },
  defaultLattice: {
    key: 'defaultLattice',
    env: 'DEFAULT_LATTICE',
    default: 'default',
    description: 'Lattice used when a resource sets no spec.lattice.',
    parse: (raw) => (isSubjectToken(raw) ? raw : new Error('may contain only letters, digits, "-" and "_"')),
  },
  wadmApiPrefix: {
    key: 'wadmApiPrefix',
    env: 'WADM_API_PREFIX',
    default: 'wadm.api',
    description: "Subject prefix of wadm's API (wadm's --api-prefix).",
    parse: (raw) =>
      raw.split('.').every((t) => isSubjectToken(t)) ? raw : new Error('must be dot-separated tokens of letters, digits, "-" and "_"'),
  },
  wadmTimeoutMs: {
    key: 'wadmTimeoutMs',
    env: 'WADM_TIMEOUT_MS',
    // Half of the default hook budget (9 s): an edit's three requests one after the other fit in two
    // calls when each takes up to a third of the budget; 3 s, the old default, timed out exactly those.
    default: '4500',
    description: 'Timeout of each wadm request, in ms; a request also ends when its hook call has no time left (HOOK_TIMEOUT).',
    parse: integer(100, 8000),
  },
  hookTimeoutMs: {
    key: 'hookTimeoutMs',
    env: 'HOOK_TIMEOUT',
    default: '10s',
    description:
      "Metacontroller's timeout for this service's hooks: the CompositeController's `webhook.timeout`, which the Helm chart sets from `hooks.timeout` for both. Every hook call, counted from its arrival (reading its body, its waits and wadm requests included), ends a second before it.",
    parse: duration(2000, 600_000),
  },
  natsOutageGraceMs: {
    key: 'natsOutageGraceMs',
    env: 'NATS_OUTAGE_GRACE',
    default: '30s',
    description:
      'A replica cut off from NATS is not ready for this long, and refuses hook calls with 429 and Retry-After: 1 so that a peer answers them; past it, unless a peer (PEERS) is connected, it is ready again and answers LatticeUnavailable, so that an outage of NATS reaches every status.',
    parse: duration(0, 600_000),
  },
  peers: {
    key: 'peers',
    env: 'PEERS',
    default: '',
    description:
      "`host:port` of the other replicas, comma-separated; a name that resolves to several addresses (the Deployment's headless Service) stands for each. A replica cut off from NATS asks them (GET /natsz) and stays out of the Service while one is connected.",
    parse: (raw) => {
      const peers = raw
        .split(',')
        .map((p) => p.trim())
        .filter((p) => p.length > 0);
      const bad = peers.find((p) => !/^[\w.-]+:\d{1,5}$/.test(p));
      return bad === undefined ? peers : new Error(`must be host:port entries, comma-separated ("${bad}")`);
    },
  },
  logLevel: {
    key: 'logLevel',
    env: 'LOG_LEVEL',
    default: 'info',
    description: `Log level: ${LOG_LEVELS.join(', ')}.`,
    parse: (raw) => (LOG_LEVELS.includes(raw) ? raw : new Error(`must be one of ${LOG_LEVELS.join(', ')}`)),
  },
  logFormat: {
    key: 'logFormat',
    env: 'LOG_FORMAT',
    default: '',
    description: '`json` (one JSON object per line) or `pretty` (for a terminal); unset: pretty on a terminal, JSON otherwise.',
    parse: (raw) => (raw === '' ? undefined : raw === 'json' || raw === 'pretty' ? raw : new Error('must be json or pretty')),
  },
  bodyLimitBytes: {
    key: 'bodyLimitBytes',
    env: 'BODY_LIMIT_BYTES',
    default: String(16 * 1024 * 1024),
    description: 'Largest hook request body accepted, in bytes (Metacontroller sends whole objects with managedFields).',
    parse: integer(1024 * 1024, 256 * 1024 * 1024),
  },
  ...NATS_SECURITY,
  hookBearerTokenFile: optional(
    'hookBearerTokenFile',
    'HOOK_BEARER_TOKEN_FILE',
    'File holding the token Metacontroller must send as `Authorization: Bearer <token>` on /sync and /finalize; re-read when it changes.',
  ),
  tlsCertFile: optional('tlsCertFile', 'TLS_CERT_FILE', 'Serve HTTPS with this certificate (with TLS_KEY_FILE); reloaded when it changes.'),
  tlsKeyFile: optional('tlsKeyFile', 'TLS_KEY_FILE', 'Private key of TLS_CERT_FILE.'),
  latticePolicyFile: optional(
    'latticePolicyFile',
    'LATTICE_POLICY_FILE',
    'YAML policy of which namespaces may target which lattices; without it only DEFAULT_LATTICE is allowed. Reloaded when it changes.',
  ),
  latticePolicyStrict: {
    key: 'latticePolicyStrict',
    env: 'LATTICE_POLICY_STRICT',
    default: 'false',
    description:
      '`true`: a lattice policy that can produce lattices `a` and `a-…` (which collide in wadm) is an error: the service does not start, and a reload keeps the previous policy. `false`: a warning.',
    parse: (raw) => (raw === 'true' ? true : raw === 'false' ? false : new Error('must be true or false')),
  },
  maxConcurrentHooks: {
    key: 'maxConcurrentHooks',
    env: 'MAX_CONCURRENT_HOOKS',
    default: '64',
    description: 'Hook calls handled at once; more are answered 429 with Retry-After, which Metacontroller honours.',
    parse: integer(1, 10_000),
  },
  hookBytesInFlight: {
    key: 'hookBytesInFlight',
    env: 'HOOK_BYTES_IN_FLIGHT',
    default: '',
    description:
      "Bytes of hook request bodies handled at once (each call's Content-Length); a call that would go above is answered 429 with Retry-After, unless no other is in flight. A parsed body takes several times its size in V8's heap, and Node sizes that heap from the container's memory limit (256 MiB under 512Mi): unset, an eighth of the heap limit (~32 MiB there), so that a burst of large bodies is slowed down instead of crashing the process.",
    parse: (raw) => (raw === '' ? undefined : integer(1024 * 1024, 16 * 1024 * 1024 * 1024)(raw)),
  },
  shutdownDelayMs: {
    key: 'shutdownDelayMs',
    env: 'SHUTDOWN_DELAY_MS',
    default: '3000',
    description: 'On SIGTERM, how long to keep serving with readiness false before closing, so Service endpoints drop this pod first.',
    parse: integer(0, 60_000),
  },
  modelCacheTtlSeconds: {
    key: 'modelCacheTtlSeconds',
    env: 'MODEL_CACHE_TTL_SECONDS',
    default: '300',
    description:
      "How long what wadm said about an application's versions is trusted without reading it again. wadm's deploy/undeploy events and our own writes update it at once; past 60 s it is used only once the lattice's list confirms its newest and deployed version (so a delete, a `wash app put` or a lost wadm store is noticed within 60 s), and anything else changed outside is noticed within this time. 0 disables the cache.",
    parse: integer(0, 3600),
  },
  cacheEntries: {
    key: 'cacheEntries',
    env: 'CACHE_ENTRIES',
    default: '20000',
    description:
      'Applications whose derived manifest, settled answer and wadm facts are kept in memory (least recently used first out). Set it above the number of applications Metacontroller sends this service, or resyncs cost wadm requests.',
    parse: integer(100, 1_000_000),
  },
} satisfies { [K in keyof Config]: Variable<K> };

export type ConfigResult = { ok: true; config: Config } | { ok: false; errors: string[] };

/** Pure: reads only the given environment and reports every problem at once. */
export function loadConfig(env: Record<string, string | undefined>): ConfigResult {
  const config: Partial<Record<keyof Config, unknown>> = {};
  const errors: string[] = [];
  for (const variable of Object.values(VARIABLES) as Variable<keyof Config>[]) {
    const name = variable.env;
    const raw = env[name]?.trim() || variable.default;
    const value = variable.parse(raw);
    if (value instanceof Error) errors.push(`${name} ${value.message}, got "${raw}"`);
    else config[variable.key] = value;
  }
  errors.push(...combinationErrors(config as Config));
  return errors.length > 0 ? { ok: false, errors } : { ok: true, config: config as Config };
}

/** Settings that are fine alone but not together. */
function combinationErrors(config: Config): string[] {
  const errors: string[] = [];
  const methods = [
    ['NATS_CREDS_FILE', config.natsCredsFile],
    ['NATS_NKEY_SEED_FILE', config.natsNkeySeedFile],
    ['NATS_USER', config.natsUser],
    ['NATS_TOKEN_FILE', config.natsTokenFile],
  ].filter(([, value]) => value !== undefined);
  if (methods.length > 1) errors.push(`${methods.map(([name]) => name).join(' and ')} are exclusive: choose one NATS authentication`);
  if ((config.natsUser === undefined) !== (config.natsPasswordFile === undefined)) {
    errors.push('NATS_USER and NATS_PASSWORD_FILE go together');
  }
  if ((config.natsTlsCertFile === undefined) !== (config.natsTlsKeyFile === undefined)) {
    errors.push('NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE go together');
  }
  if ((config.tlsCertFile === undefined) !== (config.tlsKeyFile === undefined)) errors.push('TLS_CERT_FILE and TLS_KEY_FILE go together');
  return errors;
}
