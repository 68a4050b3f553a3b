// The files the service reads and re-reads while it runs: lattice policy, bearer token and TLS
// certificate (see WatchedFile).
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { parseToken } from '../http/auth.js';
import type { Config } from '../plumbing/config.js';
import { defaultOnly, fromPolicy, parsePolicy, type Tenancy } from '../core/tenancy.js';
import { describePair, prefixPairs } from '../core/policy-lint.js';
import { WatchedFile } from '../plumbing/watched-file.js';

/** The files the service reads and re-reads: lattice policy, bearer token, TLS certificate. */
export function watchedFiles(config: Config, logger: Logger, intervalMs = 2000) {
  const tenancy: Tenancy = config.latticePolicyFile
    ? delegate(
        new WatchedFile(config.latticePolicyFile, (text) => checkedPolicy(text, config, logger), logger, undefined, intervalMs),
        config.defaultLattice,
      )
    : defaultOnly(config.defaultLattice);
  const token = config.hookBearerTokenFile
    ? new WatchedFile(config.hookBearerTokenFile, parseToken, logger, undefined, intervalMs)
    : undefined;
  const tls = config.tlsCertFile && config.tlsKeyFile ? watchedTls(config.tlsCertFile, config.tlsKeyFile, logger, intervalMs) : undefined;
  return {
    tenancy,
    token,
    tls,
    close() {
      (tenancy as Partial<{ close(): void }>).close?.();
      token?.close();
      tls?.close();
    },
  };
}

/** Parses the policy and lints it for lattices that collide in wadm: warnings, or with LATTICE_POLICY_STRICT an error. */
function checkedPolicy(text: string, config: Config, logger: Logger): Tenancy {
  const policy = parsePolicy(text);
  const pairs = prefixPairs(policy).map(describePair);
  if (pairs.length > 0 && config.latticePolicyStrict) {
    throw new Error(
      `lattice policy ${config.latticePolicyFile} can produce lattices that collide in wadm (LATTICE_POLICY_STRICT=true): ${pairs.join('; ')}`,
    );
  }
  for (const pair of pairs)
    logger.warn({ path: config.latticePolicyFile, pair }, 'lattice policy can produce lattices that collide in wadm');
  return fromPolicy(policy, config.defaultLattice);
}

function delegate(file: WatchedFile<Tenancy>, defaultLattice: string): Tenancy & { close(): void } {
  return {
    defaultLattice,
    rule: 'policy',
    allows: (namespace, lattice) => file.current().allows(namespace, lattice),
    names: (lattice) => file.current().names?.(lattice) ?? false,
    revision: () => file.current(),
    namespacesFor: (lattice) => file.current().namespacesFor?.(lattice) ?? [],
    close: () => file.close(),
  };
}

/** Key and certificate change together; either file changing reloads both. */
function watchedTls(certFile: string, keyFile: string, logger: Logger, intervalMs: number) {
  const read = () => ({ cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') });
  const listeners: ((tls: { cert: string; key: string }) => void)[] = [];
  const notify = () => {
    try {
      const tls = read();
      for (const listener of listeners) listener(tls);
    } catch (err) {
      logger.error({ err: (err as Error).message }, 'cannot reload the TLS certificate; keeping the previous one');
    }
  };
  const files = [certFile, keyFile].map((path) => new WatchedFile(path, (t) => t, logger, notify, intervalMs));
  return {
    current: read,
    onChange: (listener: (tls: { cert: string; key: string }) => void) => void listeners.push(listener),
    close: () => files.forEach((f) => f.close()),
  };
}
