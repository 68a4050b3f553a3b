// The keys and names wadm and this service share: which labels and annotations reach wadm, the keys
// we add ourselves, and what a name must look like to become part of a NATS subject.
import { isSubjectToken } from '../schema/kit.js';

/** Our bookkeeping on every manifest we put: `<namespace>/<name>` of the resource that owns the model. */
export const OWNER_ANNOTATION = 'core.wasmcloud.com/owner';
/** sha256 of the rendered manifest, so a pinned version's content can be compared without re-parsing. */
export const CONTENT_HASH_ANNOTATION = 'core.wasmcloud.com/content-hash';
/** On the resource: `"true"` allows taking over a wadm model that has no owner (created with `wash app`). */
export const ADOPT_ANNOTATION = 'core.wasmcloud.com/adopt';
/** wadm's own annotations. */
export const VERSION_ANNOTATION = 'version';
export const DESCRIPTION_ANNOTATION = 'description';

// Bookkeeping of Kubernetes tools never reaches wadm: it changes without the application changing
// (kubectl's last-applied-configuration would copy the whole object into every version).
const EXCLUDED_DOMAINS = ['kubernetes.io', 'k8s.io', 'fluxcd.io', 'helm.sh']; // and their subdomains
const EXCLUDED_PREFIXES = ['argocd.argoproj.io', 'core.wasmcloud.com'];

/** The documented list, for docs/resource.md and tests. */
export const EXCLUDED_KEY_PATTERNS = [
  ...EXCLUDED_DOMAINS.flatMap((domain) => [`${domain}/*`, `*.${domain}/*`]),
  ...EXCLUDED_PREFIXES.map((prefix) => `${prefix}/*`),
];

export function isPassedThrough(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash < 0) return true;
  const prefix = key.slice(0, slash);
  if (EXCLUDED_PREFIXES.includes(prefix)) return false;
  return !EXCLUDED_DOMAINS.some((domain) => prefix === domain || prefix.endsWith(`.${domain}`));
}

const DNS_LABEL = /^[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const KEY_NAME = /^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/;

/** wadm's `valid_oam_label`: `[prefix/]name`, prefix a DNS subdomain whose labels start with a letter. */
export function isValidOamKey(key: string): boolean {
  const slash = key.indexOf('/');
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (!KEY_NAME.test(name)) return false;
  if (slash < 0) return true;
  const prefix = key.slice(0, slash);
  return prefix.length <= 253 && prefix.split('.').every((label) => DNS_LABEL.test(label));
}

/** Kubernetes' own name limit; NATS drops the connection on a protocol line over 4 KB. */
const MAX_NAME_LENGTH = 253;

/** A name wadm could store a model under: one subject token of at most 253 characters. */
export function isWadmName(value: string): boolean {
  return value.length <= MAX_NAME_LENGTH && isSubjectToken(value);
}
