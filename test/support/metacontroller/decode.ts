// Decoding a hook response the way Metacontroller does (sigs.k8s.io/json UnmarshalStrict into CompositeHookResponse):
// keys are case-sensitive, type mismatches always fail, unknown or duplicate fields fail only in strict mode.
// Go quirk kept: a repeated "status" member decodes into the same map, so the two are merged.
import type { DecodedResponse, HookName, HookVersion } from './types.js';
import { isPlainObject, jsonTypeName } from './json.js';
import { duplicateKeyPaths, objectMembers, skipSpace } from './json-scan.js';

export type DecodeResult =
  | { ok: true; response: DecodedResponse; childrenArray: boolean; warnings: string[] }
  | { ok: false; error: string };

export interface DecodeOptions {
  strict: boolean;
  version: HookVersion;
  hookType: HookName;
}

const GO_TYPES: Record<string, string> = {
  status: 'map[string]interface {}',
  children: '[]*unstructured.Unstructured',
  resyncAfterSeconds: 'float64',
  finalized: 'bool',
};

export function decodeHookResponse(body: string, options: DecodeOptions): DecodeResult {
  const { strict, version, hookType } = options;
  const fail = (detail: string): DecodeResult => ({
    ok: false,
    error: `can't unmarshal webhookResponse (version: ${version}, type: ${hookType}): ${detail}`,
  });
  let parsed: unknown;
  try {
    parsed = body.trim() === '' ? undefined : JSON.parse(body);
  } catch (error) {
    return fail(`invalid JSON: ${(error as Error).message}`);
  }
  if (parsed === undefined) return fail('unexpected end of JSON input');

  // v1 starts from `Children: []`, v2 from nil; both mean "no desired children".
  const response: DecodedResponse = { status: null, children: version === 'v1' ? [] : null, resyncAfterSeconds: 0, finalized: false };
  if (parsed === null) return { ok: true, response, childrenArray: false, warnings: [] };
  if (!isPlainObject(parsed)) {
    return fail(`json: cannot unmarshal ${jsonTypeName(parsed)} into Go value of type ${version}.CompositeHookResponse`);
  }

  const issues = new Set<string>();
  const seen = new Set<string>();
  let typeError: string | undefined;
  let childrenArray = false;
  for (const member of objectMembers(body, skipSpace(body, 0)).members) {
    const goType = GO_TYPES[member.key];
    if (goType === undefined) {
      issues.add(`unknown field "${member.key}"`);
      continue;
    }
    if (seen.has(member.key)) issues.add(`duplicate field "${member.key}"`);
    seen.add(member.key);
    const value: unknown = JSON.parse(body.slice(member.start, member.end));
    const problem = assign(response, member.key, value);
    if (problem !== undefined) {
      typeError ??= problem === 'type'
        ? `json: cannot unmarshal ${jsonTypeName(value)} into Go struct field CompositeHookResponse.${member.key} of type ${goType}`
        : problem;
      continue;
    }
    if (member.key === 'children') childrenArray = Array.isArray(value);
    if (member.key === 'status') {
      for (const path of duplicateKeyPaths(body, member.start, 'status', new Set())) issues.add(`duplicate field "${path}"`);
    }
  }
  if (typeError !== undefined) return fail(typeError);

  const warnings = [...issues];
  if (strict && warnings.length > 0) {
    const aggregate = warnings.length === 1 ? warnings[0] : `[${warnings.join(', ')}]`;
    return {
      ok: false,
      error: `strict validation failed for ${version} webhookResponse (type: ${hookType}, mode: strict): ${aggregate}`,
    };
  }
  return { ok: true, response, childrenArray, warnings };
}

/** Applies one member with Go semantics; returns 'type' or a message on a mismatch. */
function assign(response: DecodedResponse, key: string, value: unknown): 'type' | string | undefined {
  switch (key) {
    case 'status':
      if (value === null) response.status = null;
      else if (isPlainObject(value)) response.status = { ...(response.status ?? {}), ...value };
      else return 'type';
      return undefined;
    case 'children':
      if (value === null) response.children = null;
      else if (Array.isArray(value)) {
        const bad = value.find((child) => child !== null && !(isPlainObject(child) && typeof child['kind'] === 'string' && child['kind'] !== ''));
        if (bad !== undefined) {
          return isPlainObject(bad)
            ? `Object 'Kind' is missing in '${JSON.stringify(bad)}'`
            : `json: cannot unmarshal ${jsonTypeName(bad)} into Go value of type map[string]interface {}`;
        }
        response.children = value;
      } else return 'type';
      return undefined;
    case 'resyncAfterSeconds':
      // JSON null leaves a Go number or bool unchanged.
      if (typeof value === 'number') response.resyncAfterSeconds = value;
      else if (value !== null) return 'type';
      return undefined;
    case 'finalized':
      if (typeof value === 'boolean') response.finalized = value;
      else if (value !== null) return 'type';
      return undefined;
    default:
      return undefined;
  }
}
