// Property: whatever valid WasmCloudApplication goes in, `convert --to v2` writes resources that pass
// our v2 schemas and the operator's hostInterfaces rules, reports every component, and is pure
// (same output twice, input untouched). Fixed seed, as in test/fuzz/: FUZZ_SEED=<n> and
// FUZZ_RUNS_FACTOR=<x> change it; a failure prints fast-check's shrunk counterexample.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { v2Problems } from '../../src/convert/check.js';
import { convertToV2 } from '../../src/convert/to-v2.js';
import { validateParent } from '../../src/core/validate.js';
import { wasmApp } from '../support/resources.js';
import { applications, specOfApplication } from '../support/v2-applications.js';

const SEED = Number(process.env['FUZZ_SEED'] ?? 20261130);
const RUNS = Math.max(1, Math.round(300 * Number(process.env['FUZZ_RUNS_FACTOR'] ?? 1)));

it('every conversion of a valid application validates against our v2 schemas, reports every component and is pure', () => {
  let converted = 0;
  let withAllowedHosts = 0;
  const details = fc.check(
    fc.property(applications, (application) => {
      const { name, names, options } = application;
      const spec = specOfApplication(application);
      const validation = validateParent(wasmApp.scratch().named(name).with(spec).build() as never, 'default');
      fc.pre(validation.ok);
      if (!validation.ok) return;
      const before = JSON.stringify(validation.app);
      const first = convertToV2(validation.app, options);
      converted++;
      if (JSON.stringify(first.resources).includes('"allowedHosts"')) withAllowedHosts++;
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
    }),
    { seed: SEED, numRuns: RUNS, includeErrorInReport: true },
  );
  console.log(
    `[property] convert --to v2: ${details.numRuns} cases (${converted} converted, ${withAllowedHosts} with allowedHosts, ${details.numSkips} skipped as invalid), seed ${details.seed}`,
  );
  if (details.failed) throw new Error(fc.defaultReportMessage(details));
  assert.ok(converted >= RUNS / 2, `only ${converted} of ${RUNS} generated applications were valid: the generator needs work`);
  assert.ok(
    withAllowedHosts >= RUNS / 50,
    `only ${withAllowedHosts} of ${converted} conversions had outbound HTTP with allowedHosts: the generator needs work`,
  );
});
