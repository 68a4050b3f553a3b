// `validate`: the hook's validation on every WasmCloudApplication of the files or of a stream such
// as `kubectl kustomize … | wasmcloud-metacontroller validate -`. Other kinds (Namespaces,
// ConfigMaps…) are skipped and counted, not errors: a kustomization holds more than applications.
import { API_VERSION, KIND } from '../convert/oam.js';
import { renderManifest } from '../core/manifest.js';
import { check, readAll, type Options, type Outcome } from './commands.js';
import type { Document } from './commands.js';
import { manifestTooLarge, putBytes } from '../core/reasons.js';
import { SCALER_TYPES } from '../schema/kit.js';

/** The trait types wadm acts on; it ignores others silently, so a typo deploys without scaling. */
const KNOWN_TRAITS: readonly string[] = [...SCALER_TYPES, 'link'];
const WADM_API_VERSION = 'core.oam.dev/v1beta1';
/** NATS's default max_payload: what manifests are checked against unless told otherwise. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

export function validate(files: string[], options: Options & { strict?: boolean; maxPayloadBytes?: number }): Outcome {
  const lines: string[] = [];
  let failed = false;
  let skipped = 0;
  const maxPayload = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD;
  for (const doc of files.flatMap(readAll)) {
    const kind = kindOf(doc);
    if (kind === 'other') {
      skipped++;
      continue;
    }
    const checked = check(doc, options);
    if (!checked.ok) {
      failed = true;
      lines.push(...checked.problems.map((problem) => `${doc.where}: ${checked.id}: ${problem}`));
      continue;
    }
    const rendered = renderManifest(checked.validation.app);
    const manifest = { version: rendered.version, bytes: Buffer.byteLength(rendered.body) };
    // The hook's own size check: a manifest NATS cannot carry never reaches wadm.
    const tooLarge = putBytes(manifest) > maxPayload;
    if (tooLarge) lines.push(`${doc.where}: ${checked.id}: ManifestTooLarge: ${manifestTooLarge(manifest, maxPayload).message}`);
    const warnings = unknownTraits(doc.value);
    if (tooLarge || (options.strict && warnings.length > 0)) failed = true;
    lines.push(...warnings.map((w) => `${doc.where}: ${checked.id}: ${options.strict ? '' : 'warning: '}${w}`));
    if (!tooLarge && (!options.strict || warnings.length === 0))
      lines.push(`${doc.where}: ${checked.id}: valid, version ${manifest.version}`);
  }
  if (skipped > 0) lines.push(`skipped ${skipped} document${skipped === 1 ? '' : 's'} of other kinds`);
  if (lines.length === (skipped > 0 ? 1 : 0)) return { stdout: lines.map((l) => l + '\n').join(''), stderr: `no ${KIND} found\n`, code: 1 };
  return { stdout: lines.join('\n') + '\n', stderr: '', code: failed ? 1 : 0 };
}

/**
 * What a document is for validate: one of ours (right or wrong apiVersion), a wadm manifest (which
 * `check` answers with the convert hint), unreadable, or another kind to skip.
 */
function kindOf(doc: Document): 'ours' | 'wadm' | 'unreadable' | 'other' {
  const value = doc.value as { apiVersion?: unknown; kind?: unknown; unreadable?: unknown } | null;
  if (typeof value?.unreadable === 'string') return 'unreadable';
  if (value?.kind === KIND) return 'ours';
  if (value?.apiVersion === WADM_API_VERSION && value.kind === 'Application') return 'wadm';
  // Neither apiVersion nor kind: not a Kubernetes object at all; say so rather than skip it.
  if (typeof value !== 'object' || value === null || (value.apiVersion === undefined && value.kind === undefined)) return 'ours';
  return value.apiVersion === API_VERSION ? 'ours' : 'other';
}

/** Trait types wadm would ignore, each with the nearest known type when it looks like a typo. */
function unknownTraits(value: unknown): string[] {
  const components = ((value as { spec?: { components?: unknown } }).spec?.components ?? []) as { traits?: { type?: unknown }[] }[];
  const warnings: string[] = [];
  components.forEach((component, c) =>
    (component.traits ?? []).forEach((trait, t) => {
      const type = String(trait.type);
      if (KNOWN_TRAITS.includes(type)) return;
      const nearest = KNOWN_TRAITS.map((known) => ({ known, distance: editDistance(type, known) })).sort(
        (a, b) => a.distance - b.distance,
      )[0]!;
      const hint = nearest.distance <= Math.max(2, Math.floor(nearest.known.length / 4)) ? `; did you mean "${nearest.known}"?` : '';
      warnings.push(`spec.components[${c}].traits[${t}].type: unknown trait type "${type}", which wadm ignores${hint}`);
    }),
  );
  return warnings;
}

/** Levenshtein distance: insertions, deletions and substitutions each cost 1. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}
