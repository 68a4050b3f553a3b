// The application as its resource says it: validated, rendered and summed up in what a decision
// reads. Costly to compute (validation and rendering are most of a call's CPU) and a function of
// the parent's spec, labels and annotations alone, so the shell keeps one per object.
import type { HookRequest, Parent } from '../schema/hook.js';
import { renderManifest } from './manifest.js';
import { spreadRequirements, type SpreadRequirement } from './placement.js';
import { refusal, type LatticeRefusal, type Tenancy } from './tenancy.js';
import { validateParent, type Identity, type ResourceRef, type Settings } from './validate.js';

export type { Identity, ResourceRef, Settings };

/** The rendered manifest, without its body (kept out of caches: most of an entry's size). */
export interface ManifestSummary {
  version: string;
  contentHash: string;
  /** Size of the put body in bytes, to check against NATS's max_payload before sending. */
  bytes: number;
  /** The spreads that name host requirements, to explain a failed placement; absent when none does (most). */
  spreads?: SpreadRequirement[];
}

/**
 * The one shape of an application in a decision: its identity, computed once from any spec, and
 * for a valid spec its settings and rendered manifest (a ValidSpec without the spec it was made of).
 */
export type Application = Identity & ({ valid: false; problems: string[] } | ({ valid: true; manifest: ManifestSummary } & Settings));

/** One hook call: the application and what the call itself brings. */
export interface Call {
  app: Application;
  /** Undefined when the lattice policy lets this namespace target this lattice; otherwise the rule
   *  that refused it, and nothing is sent to NATS. */
  latticeRefused: LatticeRefusal | undefined;
  /** Whether the policy lets this namespace use another lattice (one the application was in before). */
  allows(lattice: string): boolean;
  /** The policy names this lattice literally (or it is the default): it may appear at any time. */
  latticeNamed?(lattice: string): boolean;
  previousStatus: unknown;
  now: number;
  /** The NATS server's max_payload, while connected: a larger manifest is a spec problem. */
  maxPayloadBytes: number | undefined;
  /**
   * How long after a deploy wadm's latest status is taken to describe it without other evidence;
   * six of them for a status known to predate the deploy (evidence.ts).
   */
  deployGraceMs?: number;
  /** The put body: rarely needed (only when its version is absent), so rendered on demand. */
  body(): string;
}

export function applicationOf(parent: Parent, defaultLattice: string): { app: Application; body?: string } {
  const validation = validateParent(parent, defaultLattice);
  // Literals, not a spread of the shared fields: one is kept per object, and a spread plus fields
  // gives each a V8 hidden class of its own.
  if (!validation.ok) {
    const { ref, owner, lattice, deletionPolicy } = validation.identity;
    return { app: { ref, owner, deletionPolicy, lattice, valid: false, problems: validation.problems } };
  }
  const spec = validation.app;
  const { version, contentHash, body } = renderManifest(spec);
  const { ref, owner, deletionPolicy, lattice, pinnedVersion, suspend, revisionHistoryLimit, adopt } = spec;
  const spreads = spreadRequirements(spec.spec);
  const manifest: ManifestSummary = { version, contentHash, bytes: Buffer.byteLength(body) };
  if (spreads.length > 0) manifest.spreads = spreads;
  return { app: { ref, owner, deletionPolicy, lattice, valid: true, pinnedVersion, suspend, revisionHistoryLimit, adopt, manifest }, body };
}

/** The call as the hook receives it; `app` comes from the shell's cache when it has one. */
export function callOf(
  request: HookRequest,
  tenancy: Tenancy,
  options: {
    app?: Application;
    now: number;
    maxPayloadBytes?: number | undefined;
    deployGraceMs?: number | undefined;
    body?: () => string | undefined;
  },
): Call {
  const app = options.app ?? applicationOf(request.parent, tenancy.defaultLattice).app;
  return {
    app,
    // Not cached with the application: the policy file may change while the spec does not.
    latticeRefused: refusal(tenancy, app.ref.namespace, app.lattice),
    allows: (lattice) => tenancy.allows(app.ref.namespace, lattice),
    latticeNamed: (lattice) => lattice === tenancy.defaultLattice || (tenancy.names?.(lattice) ?? false),
    previousStatus: request.parent.status,
    now: options.now,
    maxPayloadBytes: options.maxPayloadBytes,
    ...(options.deployGraceMs !== undefined ? { deployGraceMs: options.deployGraceMs } : {}),
    body: () => options.body?.() ?? applicationOf(request.parent, tenancy.defaultLattice).body!,
  };
}
