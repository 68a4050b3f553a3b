// Compiled JSON-schema checks with error messages that name the field, e.g.
// `spec.components[0].properties.config[0].properties.port: must be a string`.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { TSchema } from '@sinclair/typebox';
import { SUBJECT_TOKEN } from './kit.js';

const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
// Kubernetes annotations on our schemas; they carry no validation rule for Ajv (the CEL rules in
// x-kubernetes-validations are run by the API server; src/core/components.ts checks the same).
const KUBERNETES_KEYWORDS = [
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-validations',
];
for (const keyword of KUBERNETES_KEYWORDS) {
  ajv.addKeyword({ keyword, schemaType: ['boolean', 'string', 'array'] });
}
ajv.addFormat('date-time', true);

export interface Checker<T> {
  (value: unknown): value is T;
  /** Human messages naming each offending field under `root`, at most `limit` of them. */
  problems(value: unknown, root: string, limit?: number): string[];
}

export function compile<T>(schema: TSchema): Checker<T> {
  const validate: ValidateFunction = ajv.compile(schema);
  const check = ((value: unknown) => validate(value)) as Checker<T>;
  check.problems = (value, root, limit = 5) => (validate(value) ? [] : describe(validate.errors ?? [], root).slice(0, limit));
  return check;
}

function describe(errors: ErrorObject[], root: string): string[] {
  // A failed anyOf drags in the errors of every branch; report only the anyOf itself. A set and a
  // walk up each error's path keep this linear: thousands of failed unions must not block the loop.
  const unions = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  const underUnion = (path: string): boolean => {
    for (let p = path; ; p = p.slice(0, p.lastIndexOf('/'))) {
      if (unions.has(p)) return true;
      if (p === '') return false;
    }
  };
  const relevant = errors.filter((e) => e.keyword === 'anyOf' || !underUnion(e.instancePath));
  return [...new Set(relevant.map((e) => `${fieldPath(root, e)}: ${message(e)}`))];
}

function fieldPath(root: string, error: ErrorObject): string {
  const tokens = error.instancePath === '' ? [] : error.instancePath.slice(1).split('/').map(unescapePointer);
  if (error.keyword === 'required') tokens.push(String(error.params['missingProperty']));
  if (error.keyword === 'additionalProperties') tokens.push(String(error.params['additionalProperty']));
  return tokens.reduce((path, token) => path + pathSegment(token), root);
}

function pathSegment(token: string): string {
  if (/^\d+$/.test(token)) return `[${token}]`;
  return /^[A-Za-z_][\w-]*$/.test(token) ? `.${token}` : `[${JSON.stringify(token)}]`;
}

function unescapePointer(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

function message(error: ErrorObject): string {
  const { keyword, params } = error;
  switch (keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known field';
    case 'type':
      return error.schemaPath.endsWith('/additionalProperties/type') && params['type'] === 'string'
        ? 'must be a string (quote numbers and booleans in YAML)'
        : `must be ${article(String(params['type']))}`;
    case 'enum':
      return `must be one of ${(params['allowedValues'] as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'pattern':
      return params['pattern'] === SUBJECT_TOKEN
        ? 'may contain only letters, digits, "-" and "_"'
        : `must match ${String(params['pattern'])}`;
    case 'anyOf':
      return 'does not match any allowed form';
    default:
      return error.message ?? keyword;
  }
}

function article(type: string): string {
  const nouns = type.split(',').map((t) => (/^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`));
  return nouns.join(' or ');
}
