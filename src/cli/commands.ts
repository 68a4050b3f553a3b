// The command-line tool's commands, each a function from arguments to (output, exit code), so
// that tests call them directly and the binary only prints.
import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import { adoptingResource, API_VERSION, convertManifest, KIND } from '../convert/oam.js';
import { renderManifest } from '../core/manifest.js';
import { ParentSchema, type Parent } from '../schema/hook.js';
import { compile } from '../schema/validator.js';
import { validateParent, type Validation } from '../core/validate.js';

export interface Outcome {
  stdout: string;
  stderr: string;
  code: number;
}

export interface Options {
  namespace: string;
  defaultLattice: string;
}

const checkParent = compile<Parent>(ParentSchema);

/** Prints the exact manifest (JSON, as put) the hook would send to wadm, and its version. */
export function render(file: string, options: Options): Outcome {
  const docs = readAll(file);
  if (docs.length !== 1)
    return { stdout: '', stderr: `${file}: expected one WasmCloudApplication, found ${docs.length} documents\n`, code: 1 };
  const checked = check(docs[0]!, options);
  if (!checked.ok)
    return { stdout: '', stderr: checked.problems.map((p) => `${docs[0]!.where}: ${checked.id}: ${p}`).join('\n') + '\n', code: 1 };
  const rendered = renderManifest(checked.validation.app);
  return { stdout: rendered.body + '\n', stderr: `version ${rendered.version}\n`, code: 0 };
}

/**
 * Turns wadm (OAM) manifests into WasmCloudApplications: the migration from `wash app deploy`.
 * `adoptIn`: the lattice the applications run in, for resources that take them over (adoptingResource).
 */
export function convert(file: string, options: Options & { namespaceGiven: boolean; adoptIn?: string }): Outcome {
  const resources: unknown[] = [];
  const problems: string[] = [];
  const notes: string[] = [];
  const namespace = options.namespaceGiven ? options.namespace : undefined;
  for (const doc of readAll(file)) {
    const adopting = options.adoptIn === undefined ? undefined : adoptingResource(doc.value as object, namespace, options.adoptIn);
    const resource = adopting?.resource ?? convertManifest(doc.value as object, namespace);
    if (adopting?.unpinned !== undefined)
      notes.push(
        `${doc.where}: not pinned to version "${adopting.unpinned}", which wash put: the hook puts the same content as a version of its own and deploys it, and what runs keeps running`,
      );
    resources.push(resource);
    const checked = check({ where: doc.where, value: resource }, options);
    if (!checked.ok) problems.push(...checked.problems.map((p) => `${doc.where}: ${checked.id}: ${p}`));
  }
  const stdout = resources.map((r) => yaml.dump(r, { lineWidth: -1, noRefs: true })).join('---\n');
  const invalid = problems.length > 0 ? [`the converted resources are not valid:`, ...problems] : [];
  return {
    stdout,
    stderr: [...notes, ...invalid].map((line) => `${line}\n`).join(''),
    code: problems.length > 0 ? 1 : 0,
  };
}

export function readAll(file: string): Document[] {
  try {
    return readDocuments(file);
  } catch (err) {
    return [{ where: file, value: { unreadable: (err as Error).message } }];
  }
}

export type Checked =
  { ok: true; id: string; validation: Extract<Validation, { ok: true }> } | { ok: false; id: string; problems: string[] };

/** The hook's validation, on the resource as Metacontroller would send it (namespace filled in). */
export function check(doc: Document, options: Options): Checked {
  const value = doc.value as { apiVersion?: unknown; kind?: unknown; metadata?: Record<string, unknown>; unreadable?: string } | null;
  if (typeof value?.unreadable === 'string') return { ok: false, id: 'file', problems: [`cannot read: ${value.unreadable}`] };
  const id = `${String(value?.kind ?? 'document')} ${String(value?.metadata?.['namespace'] ?? options.namespace)}/${String(value?.metadata?.['name'] ?? '?')}`;
  if (value?.kind === KIND && value.apiVersion !== API_VERSION) {
    return {
      ok: false,
      id,
      problems: [`apiVersion ${JSON.stringify(value.apiVersion ?? null)} is not served: a ${KIND} has apiVersion ${API_VERSION}`],
    };
  }
  if (value?.apiVersion === 'core.oam.dev/v1beta1' && value.kind === 'Application') {
    return { ok: false, id, problems: [`a wadm manifest, not a ${KIND}; turn it into one with: wasmcloud-metacontroller convert FILE`] };
  }
  if (value?.apiVersion !== API_VERSION || value?.kind !== KIND)
    return { ok: false, id, problems: [`not a ${KIND} (apiVersion ${API_VERSION}, kind ${KIND})`] };
  const parent = { ...value, metadata: { namespace: options.namespace, ...value.metadata } };
  if (!checkParent(parent)) return { ok: false, id, problems: checkParent.problems(parent, '').map((p) => p.replace(/^\./, '')) };
  const validation = validateParent(parent, options.defaultLattice);
  return validation.ok ? { ok: true, id, validation } : { ok: false, id, problems: validation.problems };
}

// Reads the documents of YAML or JSON files (multi-document YAML allowed), remembering where each
// came from so that every message can name the file and the document.
export interface Document {
  /** `file` or `file[2]` (0-based) when the file holds several documents. */
  where: string;
  value: unknown;
}

function readDocuments(file: string): Document[] {
  const text = file === '-' ? readFileSync(0, 'utf8') : readFileSync(file, 'utf8');
  const values = yaml.loadAll(text).filter((v) => v !== null && v !== undefined);
  return values.map((value, i) => ({ where: values.length > 1 ? `${file}[${i}]` : file, value }));
}
