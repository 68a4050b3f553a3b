// Property: whatever valid WasmCloudApplication goes in, `convert --to v2` writes resources that pass
// our v2 schemas and the operator's hostInterfaces rules, reports every component, and is pure
// (same output twice, input untouched); and its classes mean what a stock v2 host does: whatever
// such a host needs beyond the output (labels, containers, a Host header, objects) is "needs input"
// with the flag or object named, and only losses and needed input exit 3. Fixed seed, as in
// test/fuzz/: FUZZ_SEED=<n> and FUZZ_RUNS_FACTOR=<x> change it; a failure prints fast-check's shrunk
// counterexample.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { v2Problems } from '../../src/convert/check.js';
import { exitCodeOf, type Finding } from '../../src/convert/report.js';
import { convertToV2, type V2Conversion, type V2Options } from '../../src/convert/to-v2.js';
import { validateParent, type ValidSpec } from '../../src/core/validate.js';
import type { LinkProperties } from '../../src/schema/application.js';
import type { WorkloadDeployment } from '../../src/schema/v2.js';
import { wasmApp } from '../support/resources.js';
import { applications, specOfApplication } from '../support/v2-applications.js';

const SEED = Number(process.env['FUZZ_SEED'] ?? 20261130);
const RUNS = Math.max(1, Math.round(300 * Number(process.env['FUZZ_RUNS_FACTOR'] ?? 1)));

/**
 * What a stock v2 host (`wash host`: one label, hostgroup; NATS blobstore; Host-header routing;
 * outbound HTTP denied by default) needs beyond the output, each with the text of the finding
 * that must ask for it. Read from the output alone, not from the converter's reasoning.
 */
function stockHostNeeds(resources: readonly WorkloadDeployment[], callsOut: ReadonlySet<string>): Map<string, string> {
  const needs = new Map<string, string>();
  for (const { spec } of resources) {
    for (const c of spec.template.spec.components)
      if (callsOut.has(c.name) && !c.localResources?.allowedHosts) needs.set(`an outbound allow-list for ${c.name}`, '--allow-host');
    const { hostSelector, hostInterfaces = [] } = spec.template.spec;
    const labels = Object.keys(hostSelector ?? {}).filter((key) => key !== 'hostgroup');
    if (labels.length > 0) needs.set(`host labels ${labels.join(', ')}`, 'hosts also carry');
    for (const entry of hostInterfaces) {
      const pkg = `${entry.namespace}:${entry.package}`;
      if (pkg === 'wasi:blobstore' && entry.config?.['buckets'] === undefined) needs.set('blobstore buckets', '--blobstore-bucket');
      if (pkg === 'wasi:http' && entry.interfaces.includes('incoming-handler') && entry.config?.['host'] === undefined)
        needs.set('an HTTP host', '--http-host');
      if (entry.configFrom !== undefined) needs.set('ConfigMaps', 'create ConfigMap');
      if (entry.secretFrom !== undefined) needs.set('a Secret', 'create Secret');
    }
  }
  return needs;
}

/** Components linked to a provider for wasi:http/outgoing-handler (either end): read from the source application. */
function outboundCallers(app: ValidSpec): Set<string> {
  const typeOf = new Map(app.spec.components.map((c) => [c.name, c.type]));
  const callers = new Set<string>();
  for (const source of app.spec.components)
    for (const trait of source.traits ?? []) {
      if (trait.type !== 'link') continue;
      const link = trait.properties as LinkProperties;
      if (link.namespace !== 'wasi' || link.package !== 'http' || !link.interfaces.includes('outgoing-handler')) continue;
      const target = typeof link.target === 'string' ? link.target : link.target.name;
      const ends = [source.name, target];
      const provider = ends.find((name) => typeOf.get(name) === 'capability');
      const component = ends.find((name) => typeOf.get(name) !== 'capability');
      if (provider !== undefined && component !== undefined) callers.add(component);
    }
  return callers;
}

/** The class properties of one conversion: what runs as converted exits 0, the flags fill what they name. */
function checkClasses(app: ValidSpec, { resources, findings }: V2Conversion, options: V2Options): void {
  const asking = findings.filter((f) => f.outcome === 'needs input').map((f) => f.detail);
  for (const [need, text] of stockHostNeeds(resources, outboundCallers(app)))
    assert.ok(
      asking.some((detail) => detail.includes(text)),
      `a stock v2 host needs ${need}, and no "needs input" finding says "${text}"`,
    );
  const losesOrAsks = findings.some((f) => f.outcome === 'dropped' || f.outcome === 'needs input');
  assert.equal(exitCodeOf(findings), losesOrAsks ? 3 : 0, 'exit 3 exactly for losses and input still needed');
  for (const f of findings.filter((f) => f.detail.includes('the listen address belongs to the host')))
    assert.equal(f.outcome, 'approximated', `the host's listen address is no loss: ${f.path}`);
  const interfaces = resources.flatMap((r) => r.spec.template.spec.hostInterfaces ?? []);
  assert.deepEqual(
    interfaces.filter((h) => h.version !== undefined),
    [],
    'v2 hosts link without interface versions',
  );
  for (const h of interfaces.filter((h) => h.package === 'secrets')) assert.deepEqual(h.interfaces, ['store', 'reveal']);
  const buckets = options.blobstoreBuckets ?? [];
  if (buckets.length > 0)
    for (const h of interfaces.filter((h) => h.package === 'blobstore')) assert.equal(h.config?.['buckets'], buckets.join(','));
  const group = options.hostgroupFromRequirement;
  if (group !== undefined)
    for (const selector of resources.map((r) => r.spec.template.spec.hostSelector ?? {}))
      assert.ok(!(group in selector) || 'hostgroup' in selector, `${group} became hostgroup, unless v1 required a hostgroup itself`);
}

it('every conversion of a valid application validates against our v2 schemas, reports every component and is pure', () => {
  const counts = { converted: 0, allowedHosts: 0, blobstore: 0, buckets: 0, hostSelector: 0, hostgroup: 0, secrets: 0, exit0: 0 };
  const details = fc.check(
    fc.property(applications, (application) => {
      const { name, names, options } = application;
      const spec = specOfApplication(application);
      const validation = validateParent(wasmApp.scratch().named(name).with(spec).build() as never, 'default');
      fc.pre(validation.ok);
      if (!validation.ok) return;
      const before = JSON.stringify(validation.app);
      const first = convertToV2(validation.app, options);
      count(counts, first.resources, first.findings);
      assert.deepEqual(v2Problems(first.resources), []);
      assert.deepEqual(convertToV2(validation.app, options), first);
      assert.equal(JSON.stringify(validation.app), before, 'the input is not mutated');
      names.forEach((_, i) =>
        assert.ok(
          first.findings.some((f) => f.path.startsWith(`spec.components[${i}]`)),
          `component ${i} is reported`,
        ),
      );
      assert.equal(
        first.resources.length === 0,
        first.findings.some((f) => f.path === 'spec.components' && f.outcome === 'dropped'),
      );
      checkClasses(validation.app, first, options);
    }),
    { seed: SEED, numRuns: RUNS, includeErrorInReport: true },
  );
  const shown = Object.entries(counts)
    .map(([what, n]) => `${n} ${what}`)
    .join(', ');
  console.log(
    `[property] convert --to v2: ${details.numRuns} cases (${shown}, ${details.numSkips} skipped as invalid), seed ${details.seed}`,
  );
  if (details.failed) throw new Error(fc.defaultReportMessage(details));
  assert.ok(
    counts.converted >= RUNS / 2,
    `only ${counts.converted} of ${RUNS} generated applications were valid: the generator needs work`,
  );
  for (const [what, n] of Object.entries(counts))
    assert.ok(n >= RUNS / 50, `only ${n} of ${counts.converted} conversions had ${what}: the generator needs work`);
});

/** How many conversions had each construct the class properties are about, so none goes untested. */
function count(counts: Record<string, number>, resources: WorkloadDeployment[], findings: Finding[]): void {
  const json = JSON.stringify(resources);
  const selectors = resources.map((r) => r.spec.template.spec.hostSelector ?? {});
  const seen: Record<string, boolean> = {
    converted: true,
    allowedHosts: json.includes('"allowedHosts"'),
    blobstore: json.includes('"package":"blobstore"'),
    buckets: json.includes('"buckets"'),
    hostSelector: selectors.some((s) => Object.keys(s).some((key) => key !== 'hostgroup')),
    hostgroup: selectors.some((s) => Object.keys(s).length === 1 && 'hostgroup' in s),
    secrets: json.includes('"package":"secrets"'),
    exit0: exitCodeOf(findings) === 0,
  };
  for (const [what, yes] of Object.entries(seen)) if (yes) counts[what]! += 1;
}
