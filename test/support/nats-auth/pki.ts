// Throwaway X.509 material for NATS TLS tests, made with the openssl CLI: a CA, a server
// certificate for 127.0.0.1 signed by it, a client certificate signed by it, and a client
// certificate signed by a second CA that the server does not trust.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface CertFiles {
  cert: string;
  key: string;
}

export interface Pki {
  ca: string;
  /** A second CA: neither the server's issuer nor trusted by the server. */
  rogueCa: string;
  server: CertFiles;
  client: CertFiles;
  /** Signed by a CA the server does not know. */
  untrustedClient: CertFiles;
  /** The PEM text of every private key, for asserting none of them reaches a log line. */
  privateKeys(): string[];
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

function authority(dir: string, name: string): CertFiles {
  const files = { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
  openssl([
    'req',
    '-x509',
    ...EC,
    '-days',
    '1',
    '-subj',
    `/CN=${name}`,
    '-keyout',
    files.key,
    '-out',
    files.cert,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  return files;
}

function leaf(dir: string, name: string, ca: CertFiles, extensions: string): CertFiles {
  const files = { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
  const csr = join(dir, `${name}.csr`);
  const ext = join(dir, `${name}.ext`);
  writeFileSync(ext, `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n${extensions}\n`);
  openssl(['req', '-new', ...EC, '-subj', `/CN=${name}`, '-keyout', files.key, '-out', csr]);
  openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    ca.cert,
    '-CAkey',
    ca.key,
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    ext,
    '-out',
    files.cert,
  ]);
  return files;
}

export function createPki(dir: string): Pki {
  const ca = authority(dir, 'nats-test-ca');
  const rogue = authority(dir, 'rogue-ca');
  const server = leaf(dir, 'nats-server', ca, 'extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost');
  const client = leaf(dir, 'metacontroller', ca, 'extendedKeyUsage=clientAuth');
  const untrustedClient = leaf(dir, 'intruder', rogue, 'extendedKeyUsage=clientAuth');
  return {
    ca: ca.cert,
    rogueCa: rogue.cert,
    server,
    client,
    untrustedClient,
    privateKeys: () => [ca, rogue, server, client, untrustedClient].map((files) => readFileSync(files.key, 'utf8')),
  };
}
