import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { validateParent } from '../src/core/validate.js';
import type { Parent } from '../src/schema/hook.js';
import { fixtureResource, hello, resource, type Resource } from './support/resources.js';

function problemsOf(parent: Resource): string[] {
  const result = validateParent(parent as unknown as Parent, 'default');
  return result.ok ? [] : result.problems;
}

function component(overrides: Record<string, unknown> = {}, properties: Record<string, unknown> = { image: 'ghcr.io/x:1' }) {
  return { name: 'c', type: 'component', properties, ...overrides };
}

function link(properties: Record<string, unknown>) {
  return { type: 'link', properties: { namespace: 'wasi', package: 'http', interfaces: ['incoming-handler'], target: 'c', ...properties } };
}

const cases: [string, Resource, RegExp][] = [
  ['a missing spec', { ...resource('a', {}), spec: undefined as never }, /^spec: is required$/],
  ['no components', resource('a', { components: [] }), /^spec\.components: must NOT have fewer than 1 items$/],
  ['an unknown trait key (wadm denies unknown fields)', fixtureResource('invalid-made-up-key.yaml'), /^spec\.components\[0\]\.traits\[0\]\.incorrect: is not a known field$/],
  ['an unknown spec field', resource('a', { components: [component()], lattices: 'x' }), /^spec\.lattices: is not a known field$/],
  ['a non-string config value', resource('a', { components: [component({}, { image: 'i', config: [{ name: 'x', properties: { port: 8080 } }] })] }), /^spec\.components\[0\]\.properties\.config\[0\]\.properties\.port: must be a string \(quote/],
  ['a wrong component type', resource('a', { components: [component({ type: 'widget' })] }), /^spec\.components\[0\]\.type: must be one of "component", "capability", "actor"$/],
  ['a lattice that is not a NATS token', resource('a', { components: [component()], lattice: 'a.b' }), /^spec\.lattice: may contain only letters, digits/],
  ['a lattice with a wildcard', resource('a', { components: [component()], lattice: '>' }), /^spec\.lattice: may contain only/],
  ['a name with a dot', resource('my.app', { components: [component()] }), /^metadata\.name: "my\.app" cannot be a wadm application name/],
  ['duplicate component names', resource('a', { components: [component(), component()] }), /^spec\.components\[1\]\.name: duplicate component name "c" \(first used by spec\.components\[0\]\)$/],
  ['duplicate component ids', resource('a', { components: [component({}, { image: 'i', id: 'x' }), component({ name: 'd' }, { image: 'i', id: 'x' })] }), /^spec\.components\[1\]\.properties\.id: duplicate component id "x"/],
  ['a link to a component that is not there', fixtureResource('invalid-dangling-link.yaml'), /^spec\.components\[0\]\.traits\[1\]\.properties\.target: link target "httpclient" is not a component of this application$/],
  ['a link missing its interfaces', resource('a', { components: [component({ traits: [{ type: 'link', properties: { namespace: 'wasi', package: 'http', target: 'c' } }] })] }), /^spec\.components\[0\]\.traits\[0\]\.properties\.interfaces: is required$/],
  ['a link target of the wrong shape', resource('a', { components: [component({ traits: [link({ target: 3 })] })] }), /^spec\.components\[0\]\.traits\[0\]\.properties\.target: does not match any allowed form$/],
  ['a spreadscaler without instances', resource('a', { components: [component({ traits: [{ type: 'spreadscaler', properties: {} }] })] }), /^spec\.components\[0\]\.traits\[0\]\.properties\.instances: is required$/],
  ['a spreadscaler with link fields', resource('a', { components: [component({ traits: [{ type: 'spreadscaler', properties: { instances: 1, target: 'c' } }] })] }), /^spec\.components\[0\]\.traits\[0\]\.properties\.target: is not a known field$/],
  ['both image and application', resource('a', { components: [component({}, { image: 'i', application: { name: 's', component: 'c' } })] }), /^spec\.components\[0\]\.properties: set either image or application, not both$/],
  ['neither image nor application', resource('a', { components: [component({}, {})] }), /^spec\.components\[0\]\.properties: set image or application$/],
  ['a shared component with a scaler', resource('a', { components: [component({ traits: [{ type: 'spreadscaler', properties: { instances: 1 } }] }, { application: { name: 's', component: 'c' } })] }), /^spec\.components\[0\]\.traits\[0\]: a shared component cannot have a scaler trait$/],
  ['a secret without a policy', resource('a', { components: [component({}, { image: 'i', secrets: [{ name: 's', properties: { policy: 'nope', key: 'k' } }] })] }), /^spec\.components\[0\]\.properties\.secrets\[0\]\.properties\.policy: no policy named "nope"/],
  ['a secret policy without backend', resource('a', { policies: [{ name: 'p', type: 'policy.secret.wasmcloud.dev/v1alpha1', properties: {} }], components: [component({}, { image: 'i', secrets: [{ name: 's', properties: { policy: 'p', key: 'k' } }] })] }), /has no "backend" property/],
  ['a duplicate link', resource('a', { components: [component({ traits: [link({}), link({})] })] }), /^spec\.components\[0\]\.traits\[1\]\.properties: duplicate link default \(wasi:http\/incoming-handler\)/],
  ['a version of "latest"', hello({ version: 'latest' }), /^spec\.version: "latest" is not allowed in wadm$/],
  ['spec.version and a different version annotation', { ...fixtureResource('secrets-policy.yaml'), spec: { ...fixtureResource('secrets-policy.yaml').spec, version: 'v2' } }, /^spec\.version: "v2" differs from annotation metadata\.annotations\.version "v0\.0\.1"/],
  ['an annotation key wadm refuses', { ...hello(), metadata: { ...hello().metadata, annotations: { '1bad.example/x': 'y' } } }, /^metadata\.annotations\["1bad\.example\/x"\]: is not a key wadm accepts$/],
  ['a deletionPolicy we do not know', hello({ deletionPolicy: 'Undeploy' }), /^spec\.deletionPolicy: must be one of "Delete", "Orphan"$/],
];

describe('spec validation', () => {
  for (const [what, parent, expected] of cases) {
    it(`names the field for ${what}`, () => {
      const problems = problemsOf(parent);
      assert.ok(problems.some((p) => expected.test(p)), `expected ${expected} in ${JSON.stringify(problems)}`);
    });
  }

  it('accepts every valid wadm fixture as is', () => {
    for (const file of ['hello.yaml', 'complex.yaml', 'daemonscaler.yaml', 'secrets-policy.yaml', 'shared-http.yaml', 'shared-http-dev.yaml']) {
      assert.deepEqual(problemsOf(fixtureResource(file)), [], file);
    }
  });

  it('ignores the annotations of Kubernetes tools, which are not keys wadm would accept anyway', () => {
    const parent = hello();
    parent.metadata.annotations = { 'kubectl.kubernetes.io/last-applied-configuration': '{}', 'argocd.argoproj.io/tracking-id': 'x' };
    const result = validateParent(parent as unknown as Parent, 'default');
    assert.ok(result.ok);
    assert.deepEqual(result.app.annotations, {});
  });

  it('reports at most a handful of schema problems, not a wall of text', () => {
    const components = Array.from({ length: 50 }, (_, i) => ({ name: `c${i}`, type: 'nope', properties: {} }));
    assert.ok(problemsOf(resource('a', { components })).length <= 5);
  });

  it('defaults lattice, deletion policy, suspend and history limit', () => {
    const result = validateParent(hello() as unknown as Parent, 'prod');
    assert.ok(result.ok);
    const { lattice, deletionPolicy, suspend, revisionHistoryLimit, pinnedVersion } = result.app;
    assert.deepEqual({ lattice, deletionPolicy, suspend, revisionHistoryLimit, pinnedVersion }, {
      lattice: 'prod', deletionPolicy: 'Delete', suspend: false, revisionHistoryLimit: 10, pinnedVersion: undefined,
    });
  });
});
