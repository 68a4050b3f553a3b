// The loss report of `convert --to v2`: one finding per construct of the source, each saying what
// became of it and naming the source field, so that a user can act on every line. The outcomes say
// what a v2 host does with the output (checked on a real one, see docs/migrating-to-v2.md):
// mapped: runs as converted, nothing more to give; approximated: runs, with the stated difference;
// needs input: does not run (or not right) until the flag or object named is supplied; dropped: lost.

const OUTCOMES = ['mapped', 'approximated', 'needs input', 'dropped'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export interface Finding {
  outcome: Outcome;
  /** The source field, e.g. `spec.components[1].traits[0].properties.source.config[0]`. */
  path: string;
  /** mapped: where it went; approximated: how; needs input: which flag or object; dropped: why. */
  detail: string;
}

/** Exit codes of the command: CI can gate on output that runs as converted, differences stated. */
export const EXIT_RUNS = 0;
export const EXIT_INVALID = 1;
export const EXIT_INCOMPLETE = 3;

/** 3 when something was dropped or still needs input; approximations run, so they alone exit 0. */
export function exitCodeOf(findings: readonly Finding[]): number {
  return findings.some((f) => f.outcome === 'dropped' || f.outcome === 'needs input') ? EXIT_INCOMPLETE : EXIT_RUNS;
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
