import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { validateParent } from '../../src/core/validate.js';
import type { Parent } from '../../src/schema/hook.js';
import { wasmApp, type Resource } from '../support/resources.js';

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
  ['a missing spec', { ...wasmApp.scratch().named('a').build(), spec: undefined as never }, /^spec: is required$/],
  ['no components', wasmApp.scratch().named('a').with({ components: [] }).build(), /^spec\.components: must NOT have fewer than 1 items$/],
  [
    'an unknown trait key (wadm denies unknown fields)',
    wasmApp('invalid-made-up-key.yaml').build(),
    /^spec\.components\[0\]\.traits\[0\]\.incorrect: is not a known field$/,
  ],
  [
    'an unknown spec field',
    wasmApp
      .scratch()
      .named('a')
      .with({ components: [component()], lattices: 'x' })
      .build(),
    /^spec\.lattices: is not a known field$/,
  ],
  [
    'a non-string config value',
    wasmApp
      .scratch()
      .named('a')
      .with({ components: [component({}, { image: 'i', config: [{ name: 'x', properties: { port: 8080 } }] })] })
      .build(),
    /^spec\.components\[0\]\.properties\.config\[0\]\.properties\.port: must be a string \(quote/,
  ],
  [
    'a wrong component type',
    wasmApp
      .scratch()
      .named('a')
      .with({ components: [component({ type: 'widget' })] })
      .build(),
    /^spec\.components\[0\]\.type: must be one of "component", "capability", "actor"$/,
  ],
  [
    'a lattice that is not a NATS token',
    wasmApp
      .scratch()
      .named('a')
      .with({ components: [component()], lattice: 'a.b' })
      .build(),
    /^spec\.lattice: may contain only letters, digits/,
  ],
  [
    'a lattice with a wildcard',
    wasmApp
      .scratch()
      .named('a')
      .with({ components: [component()], lattice: '>' })
      .build(),
    /^spec\.lattice: may contain only/,
  ],
  [
    'a name with a dot',
    wasmApp
      .scratch()
      .named('my.app')
      .with({ components: [component()] })
      .build(),
    /^metadata\.name: "my\.app" cannot be a wadm application name/,
  ],
  [
    'duplicate component names',
    wasmApp
      .scratch()
      .named('a')
      .with({ components: [component(), component()] })
      .build(),
    /^spec\.components\[1\]\.name: duplicate component name "c" \(first used by spec\.components\[0\]\)$/,
  ],
  [
    'duplicate component ids',
    wasmApp
      .scratch()
      .named('a')
      .with({ components: [component({}, { image: 'i', id: 'x' }), component({ name: 'd' }, { image: 'i', id: 'x' })] })
      .build(),
    /^spec\.components\[1\]\.properties\.id: duplicate component id "x"/,
  ],
  [
    'a link to a component that is not there',
    wasmApp('invalid-dangling-link.yaml').build(),
    /^spec\.components\[0\]\.traits\[1\]\.properties\.target: link target "httpclient" is not a component of this application$/,
  ],
  [
    'a link missing its interfaces',
    wasmApp
      .scratch()
      .named('a')
      .with({ components: [component({ traits: [{ type: 'link', properties: { namespace: 'wasi', package: 'http', target: 'c' } }] })] })
      .build(),
    /^spec\.components\[0\]\.traits\[0\]\.properties\.interfaces: is required$/,
  ],
  [
    'a link target of the wrong shape',
    wasmApp
      .scratch()
      .named('a')
      .with({ components: [component({ traits: [link({ target: 3 })] })] })
      .build(),
    /^spec\.components\[0\]\.traits\[0\]\.properties\.target: does not match any allowed form$/,
  ],
  [
    'a spreadscaler without instances',
    wasmApp
      .scratch()
      .named('a')
      .with({ components: [component({ traits: [{ type: 'spreadscaler', properties: {} }] })] })
      .build(),
    /^spec\.components\[0\]\.traits\[0\]\.properties\.instances: is required$/,
  ],
  [
    'a spreadscaler with link fields',
    wasmApp
      .scratch()
      .named('a')
      .with({ components: [component({ traits: [{ type: 'spreadscaler', properties: { instances: 1, target: 'c' } }] })] })
      .build(),
    /^spec\.components\[0\]\.traits\[0\]\.properties\.target: is not a known field$/,
  ],
  [
    'both image and application',
    wasmApp
      .scratch()
      .named('a')
      .with({ components: [component({}, { image: 'i', application: { name: 's', component: 'c' } })] })
      .build(),
    /^spec\.components\[0\]\.properties: set either image or application, not both$/,
  ],
  [
    'neither image nor application',
    wasmApp
      .scratch()
      .named('a')
      .with({ components: [component({}, {})] })
      .build(),
    /^spec\.components\[0\]\.properties: set image or application$/,
  ],
  [
    'a shared component with a scaler',
    wasmApp
      .scratch()
      .named('a')
      .with({
        components: [
          component({ traits: [{ type: 'spreadscaler', properties: { instances: 1 } }] }, { application: { name: 's', component: 'c' } }),
        ],
      })
      .build(),
    /^spec\.components\[0\]\.traits\[0\]: a shared component cannot have a scaler trait$/,
  ],
  [
    'a secret without a policy',
    wasmApp
      .scratch()
      .named('a')
      .with({ components: [component({}, { image: 'i', secrets: [{ name: 's', properties: { policy: 'nope', key: 'k' } }] })] })
      .build(),
    /^spec\.components\[0\]\.properties\.secrets\[0\]\.properties\.policy: no policy named "nope"/,
  ],
  [
    'a secret policy without backend',
    wasmApp
      .scratch()
      .named('a')
      .with({
        policies: [{ name: 'p', type: 'policy.secret.wasmcloud.dev/v1alpha1', properties: {} }],
        components: [component({}, { image: 'i', secrets: [{ name: 's', properties: { policy: 'p', key: 'k' } }] })],
      })
      .build(),
    /has no "backend" property/,
  ],
  [
    'a duplicate link',
    wasmApp
      .scratch()
      .named('a')
      .with({ components: [component({ traits: [link({}), link({})] })] })
      .build(),
    /^spec\.components\[0\]\.traits\[1\]\.properties: duplicate link default \(wasi:http\/incoming-handler\)/,
  ],
  ['a version of "latest"', wasmApp().pinned('latest').build(), /^spec\.version: "latest" is not allowed in wadm$/],
  [
    'spec.version and a different version annotation',
    wasmApp('secrets-policy.yaml').pinned('v2').build(),
    /^spec\.version: "v2" differs from annotation metadata\.annotations\.version "v0\.0\.1"/,
  ],
  [
    'an annotation key wadm refuses',
    wasmApp().unannotated().annotated({ '1bad.example/x': 'y' }).build(),
    /^metadata\.annotations\["1bad\.example\/x"\]: is not a key wadm accepts$/,
  ],
  [
    'a deletionPolicy we do not know',
    wasmApp().with({ deletionPolicy: 'Undeploy' }).build(),
    /^spec\.deletionPolicy: must be one of "Delete", "Orphan"$/,
  ],
];

describe('spec validation', () => {
  for (const [what, parent, expected] of cases) {
    it(`names the field for ${what}`, () => {
      const problems = problemsOf(parent);
      assert.ok(
        problems.some((p) => expected.test(p)),
        `expected ${expected} in ${JSON.stringify(problems)}`,
      );
    });
  }

  it('accepts every valid wadm fixture as is', () => {
    for (const file of [
      'hello.yaml',
      'complex.yaml',
      'daemonscaler.yaml',
      'secrets-policy.yaml',
      'shared-http.yaml',
      'shared-http-dev.yaml',
    ]) {
      assert.deepEqual(problemsOf(wasmApp(file).build()), [], file);
    }
  });

  it('ignores the annotations of Kubernetes tools, which are not keys wadm would accept anyway', () => {
    const parent = wasmApp()
      .unannotated()
      .annotated({ 'kubectl.kubernetes.io/last-applied-configuration': '{}', 'argocd.argoproj.io/tracking-id': 'x' })
      .build();
    const result = validateParent(parent as unknown as Parent, 'default');
    assert.ok(result.ok);
    assert.deepEqual(result.app.annotations, {});
  });

  it('reports at most a handful of schema problems, not a wall of text', () => {
    const components = Array.from({ length: 50 }, (_, i) => ({ name: `c${i}`, type: 'nope', properties: {} }));
    assert.ok(problemsOf(wasmApp.scratch().named('a').with({ components }).build()).length <= 5);
  });

  it('defaults lattice, deletion policy, suspend and history limit', () => {
    const result = validateParent(wasmApp().build() as unknown as Parent, 'prod');
    assert.ok(result.ok);
    const { lattice, deletionPolicy, suspend, revisionHistoryLimit, pinnedVersion } = result.app;
    assert.deepEqual(
      { lattice, deletionPolicy, suspend, revisionHistoryLimit, pinnedVersion },
      {
        lattice: 'prod',
        deletionPolicy: 'Delete',
        suspend: false,
        revisionHistoryLimit: 10,
        pinnedVersion: undefined,
      },
    );
  });
});
