// The loss report of `convert --to v2`: one finding per construct of the source, each saying what
// became of it and naming the source field, so that a user can act on every line.

const OUTCOMES = ['mapped', 'approximated', 'needs input', 'dropped'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export interface Finding {
  outcome: Outcome;
  /** The source field, e.g. `spec.components[1].traits[0].properties.source.config[0]`. */
  path: string;
  /** mapped: where it went; approximated: how; needs input: which flag or object; dropped: why. */
  detail: string;
}

/** Exit codes of the command: CI can gate on anything short of a faithful conversion. */
export const EXIT_FAITHFUL = 0;
export const EXIT_INVALID = 1;
export const EXIT_LOSSY = 3;

export function isLossy(findings: readonly Finding[]): boolean {
  return findings.some((finding) => finding.outcome !== 'mapped');
}

export const mapped = (path: string, detail: string): Finding => ({ outcome: 'mapped', path, detail });
export const approximated = (path: string, detail: string): Finding => ({ outcome: 'approximated', path, detail });
export const needsInput = (path: string, detail: string): Finding => ({ outcome: 'needs input', path, detail });
export const dropped = (path: string, detail: string): Finding => ({ outcome: 'dropped', path, detail });

const WIDTH = Math.max(...OUTCOMES.map((outcome) => outcome.length));

/** One block per application: a heading, then one line per finding in source order. */
export function formatReport(heading: string, findings: readonly Finding[]): string {
  const lines = findings.map((f) => `  ${f.outcome.padEnd(WIDTH)}  ${f.path}: ${f.detail}`);
  return [heading, ...lines].join('\n') + '\n';
}

/** `12 mapped, 3 approximated, 1 needs input, 4 dropped`, every outcome shown even at 0. */
export function summarize(findings: readonly Finding[]): string {
  return OUTCOMES.map((outcome) => `${findings.filter((f) => f.outcome === outcome).length} ${outcome}`).join(', ');
}
