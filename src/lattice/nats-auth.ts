// NATS authentication and TLS from the configuration. Secret files are read at every
// (re)connect, not once, so that a rotated Kubernetes Secret takes effect without a restart.
import { readFileSync } from 'node:fs';
import { credsAuthenticator, nkeyAuthenticator, tokenAuthenticator, usernamePasswordAuthenticator, type ConnectionOptions } from 'nats';
import type { Config } from '../plumbing/config.js';

export function natsSecurityOptions(config: Config): Partial<ConnectionOptions> {
  const options: Partial<ConnectionOptions> = {};
  const authenticator = authenticatorOf(config);
  if (authenticator) options.authenticator = authenticator;
  if (config.natsTlsCaFile || config.natsTlsCertFile) {
    options.tls = {
      ...(config.natsTlsCaFile ? { caFile: config.natsTlsCaFile } : {}),
      ...(config.natsTlsCertFile ? { certFile: config.natsTlsCertFile, keyFile: config.natsTlsKeyFile } : {}),
    };
  }
  return options;
}

function authenticatorOf(config: Config): ConnectionOptions['authenticator'] {
  if (config.natsCredsFile) return credsAuthenticator(bytes(config.natsCredsFile));
  if (config.natsNkeySeedFile) return nkeyAuthenticator(() => new TextEncoder().encode(text(config.natsNkeySeedFile!)()));
  if (config.natsUser && config.natsPasswordFile) return usernamePasswordAuthenticator(config.natsUser, text(config.natsPasswordFile));
  if (config.natsTokenFile) return tokenAuthenticator(text(config.natsTokenFile));
  return undefined;
}

function bytes(path: string): () => Uint8Array {
  return () => readFileSync(path);
}

/** A secret file's content; trailing newlines (as `kubectl create secret --from-file` keeps them) dropped. */
function text(path: string): () => string {
  return () => readFileSync(path, 'utf8').replace(/\r?\n$/, '');
}
