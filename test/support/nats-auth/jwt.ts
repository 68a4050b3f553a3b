// Decentralized NATS auth (operator → account → user JWTs) built by hand with the nkeys that
// the `nats` client ships: a JWT is `base64url(header).base64url(claims).base64url(signature)`
// where the signature is the issuer's ed25519 nkey signature over the first two parts.
// The claims follow nats-io/jwt v2 (version 2; limits spelled out, since a missing limit is 0).
import { randomBytes } from 'node:crypto';
import { nkeys as untypedNkeys } from 'nats';

interface KeyPair {
  getPublicKey(): string;
  getSeed(): Uint8Array;
  sign(data: Uint8Array): Uint8Array;
}

// `nats` declares nkeys as `any`; these are the functions used here.
const nkeys = untypedNkeys as { createOperator(): KeyPair; createAccount(): KeyPair; createUser(): KeyPair };

const UNLIMITED = { subs: -1, data: -1, payload: -1 };

function base64url(data: Uint8Array | string): string {
  return Buffer.from(data).toString('base64url');
}

function encode(issuer: KeyPair, subject: string, name: string, nats: Record<string, unknown>): string {
  const header = base64url(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' }));
  const claims = {
    jti: randomBytes(20).toString('hex').toUpperCase(),
    iat: Math.floor(Date.now() / 1000),
    iss: issuer.getPublicKey(),
    name,
    sub: subject,
    nats: { ...nats, version: 2 },
  };
  const signed = `${header}.${base64url(JSON.stringify(claims))}`;
  return `${signed}.${base64url(issuer.sign(new TextEncoder().encode(signed)))}`;
}

function seedOf(kp: KeyPair): string {
  return new TextDecoder().decode(kp.getSeed());
}

export interface Operator {
  /** The server's configuration: trusted operator and its account, preloaded in a memory resolver. */
  serverConfig(): string;
  /** A user of the operator's account: its JWT, seed and `.creds` text. */
  user(name: string): { jwt: string; seed: string; creds: string };
}

export function createOperator(): Operator {
  const operator = nkeys.createOperator();
  const account = nkeys.createAccount();
  const operatorJwt = encode(operator, operator.getPublicKey(), 'test-operator', { type: 'operator' });
  const accountJwt = encode(operator, account.getPublicKey(), 'test-account', {
    type: 'account',
    limits: { ...UNLIMITED, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 },
    default_permissions: { pub: {}, sub: {} },
  });
  return {
    serverConfig: () =>
      [
        `operator: "${operatorJwt}"`,
        'resolver: MEMORY',
        'resolver_preload: {',
        `  ${account.getPublicKey()}: "${accountJwt}"`,
        '}',
        '',
      ].join('\n'),
    user(name) {
      const user = nkeys.createUser();
      const jwt = encode(account, user.getPublicKey(), name, { type: 'user', pub: {}, sub: {}, ...UNLIMITED });
      const seed = seedOf(user);
      return { jwt, seed, creds: credsFile(jwt, seed) };
    },
  };
}

/** The `.creds` layout that `nsc` writes and nats.js's credsAuthenticator parses. */
function credsFile(jwt: string, seed: string): string {
  return [
    '-----BEGIN NATS USER JWT-----',
    jwt,
    '------END NATS USER JWT------',
    '',
    '************************* IMPORTANT *************************',
    'NKEY Seed printed below can be used to sign and prove identity.',
    'NKEYs are sensitive and should be treated as secrets.',
    '',
    '-----BEGIN USER NKEY SEED-----',
    seed,
    '------END USER NKEY SEED------',
    '',
    '*************************************************************',
    '',
  ].join('\n');
}

export function createUserKey(): { publicKey: string; seed: string } {
  const user = nkeys.createUser();
  return { publicKey: user.getPublicKey(), seed: seedOf(user) };
}
