import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import yaml from 'js-yaml';
import { canonicalJson, renderManifest } from '../../src/core/manifest.js';
import { validateParent } from '../../src/core/validate.js';
import type { Parent } from '../../src/schema/hook.js';
import { wasmApp, type Resource } from '../support/resources.js';
import { fixtureText } from '../support/fixtures.js';

function render(parent: Resource) {
  const result = validateParent(parent as unknown as Parent, 'default');
  assert.ok(result.ok, JSON.stringify(!result.ok && result.problems));
  return renderManifest(result.app);
}

const VALID = ['hello.yaml', 'complex.yaml', 'daemonscaler.yaml', 'secrets-policy.yaml', 'shared-http.yaml', 'shared-http-dev.yaml'];

describe('rendering a WasmCloudApplication into a wadm manifest', () => {
  for (const file of VALID) {
    it(`gives back ${file} with only our bookkeeping annotations added`, () => {
      const original = yaml.load(fixtureText(file)) as { metadata: { name: string; annotations: Record<string, string> }; spec: unknown };
      const { manifest, version, contentHash } = render(wasmApp(file).build());
      assert.equal(manifest.apiVersion, 'core.oam.dev/v1beta1');
      assert.equal(manifest.kind, 'Application');
      assert.equal(manifest.metadata.name, original.metadata.name);
      assert.deepEqual(manifest.spec, original.spec);
      assert.deepEqual(manifest.metadata.annotations, {
        ...original.metadata.annotations,
        'core.wasmcloud.com/owner': `default/${original.metadata.name}`,
        'core.wasmcloud.com/content-hash': contentHash,
        version,
      });
    });
  }

  // A version is what every resource's status and wadm's history hold: a change of rendering or of
  // canonical JSON that moves it would put a new version of every application on an upgrade.
  it('derives the same versions as every release before', () => {
    const versions = Object.fromEntries(VALID.map((file) => [file, render(wasmApp(file).build()).version]));
    assert.deepEqual(versions, {
      'hello.yaml': 'sha-72ddc1eef3fe1252',
      'complex.yaml': 'sha-925120e1ece4bbc3',
      'daemonscaler.yaml': 'sha-13f3eff17f440fb4',
      'secrets-policy.yaml': 'v0.0.1',
      'shared-http.yaml': 'sha-2899847ca6e62e57',
      'shared-http-dev.yaml': 'sha-6aeae9e4525f6421',
    });
  });

  it('hashes canonical JSON: keys sorted at every level, undefined members left out, arrays in order', () => {
    const sortedCopy = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map((item) => sortedCopy(item ?? null))
        : value !== null && typeof value === 'object'
          ? Object.fromEntries(
              Object.keys(value)
                .sort()
                .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
                .map((key) => [key, sortedCopy((value as Record<string, unknown>)[key])]),
            )
          : value;
    const samples: unknown[] = [
      null,
      0,
      'a"b\\c\u2028',
      [],
      {},
      [1, undefined, { b: 1, a: [{ d: null, c: 'x' }] }],
      { z: undefined, é: 1, Z: 2, '': { y: [true, false], x: 1.5 } },
      ...VALID.map((file) => render(wasmApp(file).build()).manifest),
    ];
    for (const sample of samples) assert.equal(canonicalJson(sample), JSON.stringify(sortedCopy(sample)));
    assert.equal(canonicalJson({ b: 1, a: { d: 2, c: 3 } }), canonicalJson({ a: { c: 3, d: 2 }, b: 1 }));
  });

  it('sends the manifest as JSON, which wadm takes with Content-Type application/json', () => {
    const rendered = render(wasmApp().build());
    assert.deepEqual(JSON.parse(rendered.body), rendered.manifest);
  });

  it("puts spec.description into wadm's description annotation", () => {
    assert.equal(render(wasmApp().described('mine').build()).manifest.metadata.annotations['description'], 'mine');
  });

  it('keeps excluded keys out of the manifest and out of the version', () => {
    const plain = render(wasmApp().build());
    const decorated = wasmApp()
      .labelled({ 'app.kubernetes.io/instance': 'x', 'kustomize.toolkit.fluxcd.io/name': 'y' })
      .annotated({
        'kubectl.kubernetes.io/last-applied-configuration': '{"big":"object"}',
        'metacontroller.k8s.io/last-applied-configuration': '{}',
        'argocd.argoproj.io/tracking-id': 'app:core.wasmcloud.com/WasmCloudApplication:default/hello-world',
        'core.wasmcloud.com/adopt': 'true',
        'meta.helm.sh/release-name': 'r',
      })
      .build();
    const rendered = render(decorated);
    assert.equal(rendered.version, plain.version);
    assert.equal(rendered.manifest.metadata.labels, undefined);
  });

  it('passes other labels and annotations through, which changes the version', () => {
    const labelled = wasmApp().labelled({ team: 'blue' }).annotated({ 'experimental.wasmcloud.dev/shared': 'true' }).build();
    const rendered = render(labelled);
    assert.deepEqual(rendered.manifest.metadata.labels, { team: 'blue' });
    assert.equal(rendered.manifest.metadata.annotations['experimental.wasmcloud.dev/shared'], 'true');
    assert.notEqual(rendered.version, render(wasmApp().build()).version);
  });

  it('gives the same application in two namespaces different versions (the owner is part of it)', () => {
    assert.notEqual(render(wasmApp().inNamespace('a').build()).version, render(wasmApp().inNamespace('b').build()).version);
  });
});
