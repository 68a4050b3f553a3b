// The put body rules of `crates/wadm/src/server/parser.rs` (reference §1.3): the header key is
// exactly `Content-Type`, its value exactly `application/json` or `application/yaml`; without the
// header YAML is tried first, then JSON, and both errors are reported.
import yaml from 'js-yaml';
import { decodeManifest } from './decode.js';
import { DecodeError, YamlPlain, type Ctx, type Node } from './serde.js';
import type { Manifest } from './types.js';

export const JSON_MIME = 'application/json';
export const YAML_MIME = 'application/yaml';

/** A put that wadm refuses while parsing; `message` is the whole reply message. */
export class ManifestParseError extends Error {}

export function parseManifest(body: Uint8Array, contentType: string | undefined): Manifest {
  const attempt = (decode: (b: Uint8Array) => Manifest): Manifest => {
    try {
      return decode(body);
    } catch (e) {
      if (e instanceof DecodeError) throw new ManifestParseError(`Unable to parse manifest: ${e.message}`);
      throw e;
    }
  };
  if (contentType === JSON_MIME) return attempt(decodeJson);
  if (contentType === YAML_MIME) return attempt(decodeYaml);
  if (contentType !== undefined) {
    // put_model wraps every parser error, this one included, in "Unable to parse manifest: ".
    throw new ManifestParseError(
      `Unable to parse manifest: Unsupported content type ${contentType} given. Wadm supports YAML and JSON`,
    );
  }
  return attempt(decodeYamlOrJson);
}

function decodeYamlOrJson(body: Uint8Array): Manifest {
  try {
    return decodeYaml(body);
  } catch (yamlError) {
    if (!(yamlError instanceof DecodeError)) throw yamlError;
    try {
      return decodeJson(body);
    } catch (jsonError) {
      if (!(jsonError instanceof DecodeError)) throw jsonError;
      // anyhow's `{:?}` of `JSON error .context(YAML error)`; Rust also prints line/column.
      throw new DecodeError(
        `YAML parsing failed: Error(${JSON.stringify(yamlError.message)})\n\nCaused by:\n` +
          `    JSON parsing failed: Error(${JSON.stringify(jsonError.message)})`,
      );
    }
  }
}

export function decodeYaml(body: Uint8Array): Manifest {
  const ctx: Ctx = { format: 'yaml', lenient: true, path: '', frozen: false };
  let docs: unknown[];
  try {
    docs = yaml.loadAll(utf8(body), null, { schema: PLAIN_SCALAR_SCHEMA });
  } catch (e) {
    throw new DecodeError(e instanceof yaml.YAMLException ? e.reason : String(e));
  }
  // serde_yaml's from_slice reads the first document; an empty stream is an empty mapping.
  return decodeManifest(docs[0] as Node, ctx);
}

export function decodeJson(body: Uint8Array): Manifest {
  const ctx: Ctx = { format: 'json', lenient: false, path: '', frozen: false };
  let doc: unknown;
  try {
    doc = JSON.parse(utf8(body));
  } catch (e) {
    throw new DecodeError(e instanceof Error ? e.message : String(e));
  }
  return decodeManifest(doc as Node, ctx);
}

function utf8(body: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new DecodeError('invalid UTF-8');
  }
}

// A failsafe schema (every scalar a string) plus one implicit type that wraps plain scalars which
// serde_yaml would resolve to null/bool/int/float, keeping their raw text (see serde.ts).
const PLAIN_SCALAR_SCHEMA = yaml.FAILSAFE_SCHEMA.extend({
  implicit: [
    new yaml.Type('tag:fake-wadm,2026:plain', {
      kind: 'scalar',
      resolve: (data: string) => resolvePlain(data) !== undefined,
      construct: (data: string) => new YamlPlain(data, resolvePlain(data) ?? null),
    }),
  ],
});

const NULLS = new Set(['', '~', 'null', 'Null', 'NULL']);
const BOOLS = new Map([['true', true], ['True', true], ['TRUE', true], ['false', false], ['False', false], ['FALSE', false]]);
const RADIX_INT = /^([+-]?)0([xob])([0-9a-fA-F]+)$/;
const DECIMAL = /^[+-]?[0-9]+$/;
const FLOAT = /^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$/;

/** serde_yaml 0.9's `visit_untagged_scalar`, minus integer-width corner cases. */
export function resolvePlain(raw: string): null | boolean | number | undefined {
  if (NULLS.has(raw)) return null;
  const bool = BOOLS.get(raw);
  if (bool !== undefined) return bool;
  const radix = RADIX_INT.exec(raw);
  if (radix) return radixInt(radix);
  // YAML 1.2: leading zeros followed by digits ("0123") make a string, not a number.
  if (/^[+-]?0[0-9]+$/.test(raw)) return undefined;
  if (DECIMAL.test(raw)) return Number(raw);
  if (/^[+-]?\.(inf|Inf|INF)$/.test(raw)) return raw.startsWith('-') ? -Infinity : Infinity;
  if (/^\.(nan|NaN|NAN)$/.test(raw)) return Number.NaN;
  if (FLOAT.test(raw)) return Number(raw);
  return undefined;
}

function radixInt(match: RegExpExecArray): number | undefined {
  const [, sign, kind, digits = ''] = match;
  const base = kind === 'x' ? 16 : kind === 'o' ? 8 : 2;
  if (![...digits].every((d) => Number.parseInt(d, 16) < base)) return undefined;
  const value = Number.parseInt(digits, base);
  return sign === '-' ? -value : value;
}
