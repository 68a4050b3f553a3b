import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv } from 'ajv';
import yaml from 'js-yaml';
import { buildCrd, renderCrdYaml } from '../../src/schema/crd.js';
import { buildWorkloadDeploymentCrd } from '../../src/schema/v2-crd.js';
import { buildLatticeCrd, renderLatticeCrdYaml } from '../../src/schema/lattice-crd.js';
import { LatticeSpecSchema } from '../../src/schema/lattice.js';
import { compile } from '../../src/schema/validator.js';
import { wasmApp } from '../support/resources.js';

type Node = Record<string, unknown>;
type Crd = { spec: { names: Node; versions: Node[] } };
const crd = buildCrd() as Crd;
const version = crd.spec.versions[0]!;
const schemaOf = (of: Crd): Node => (of.spec.versions[0]!['schema'] as { openAPIV3Schema: Node }).openAPIV3Schema;
const openApi = schemaOf(crd);
const latticeCrd = buildLatticeCrd() as Crd & { spec: { scope: string } };
const latticeApi = schemaOf(latticeCrd);

/** Every schema node with its path, depth first. */
function* walk(node: Node, path: string): Generator<[string, Node]> {
  yield [path, node];
  for (const [key, child] of Object.entries((node['properties'] ?? {}) as Record<string, Node>)) yield* walk(child, `${path}.${key}`);
  if (typeof node['items'] === 'object') yield* walk(node['items'] as Node, `${path}[]`);
  if (typeof node['additionalProperties'] === 'object') yield* walk(node['additionalProperties'] as Node, `${path}{}`);
}

describe('the generated CRD', () => {
  it('is what manifests/crd.yaml holds (run `npm run crd` after changing src/schema/)', () => {
    const checkedIn = readFileSync(resolve(import.meta.dirname, '../../manifests/crd.yaml'), 'utf8');
    assert.equal(checkedIn, renderCrdYaml());
  });

  it('is a structural schema: a type on every node, no const, $ref, typed unions or patternProperties (the v2 test CRD too)', () => {
    const nodes = [...walk(openApi, 'root'), ...walk(latticeApi, 'lattice'), ...walk(schemaOf(buildWorkloadDeploymentCrd() as Crd), 'v2')];
    for (const [path, node] of nodes) {
      assert.ok(node['type'] !== undefined || node['x-kubernetes-preserve-unknown-fields'] === true, `${path} has no type`);
      for (const banned of ['const', '$ref', '$id', '$schema', 'anyOf', 'oneOf', 'patternProperties']) {
        assert.equal(node[banned], undefined, `${path} has ${banned}`);
      }
      if (node['properties'] !== undefined)
        assert.equal(node['additionalProperties'], undefined, `${path} has properties and additionalProperties`);
    }
  });

  it('describes every spec and status field, for kubectl explain (the lattice CRD too)', () => {
    for (const [kind, schema] of [
      ['WasmCloudApplication', openApi],
      ['WasmCloudLattice', latticeApi],
    ] as const) {
      const props = schema['properties'] as Record<string, Node>;
      for (const root of ['spec', 'status']) {
        for (const [path, node] of walk(props[root]!, root)) {
          if (path.endsWith('{}') || path.endsWith('[]')) continue; // map values and list items are described by their parent
          assert.equal(typeof node['description'], 'string', `${kind} ${path} has no description`);
        }
      }
    }
  });

  it('has the status subresource, the wcapp short name and the printer columns users expect', () => {
    assert.deepEqual(version['subresources'], { status: {} });
    assert.deepEqual(crd.spec.names['shortNames'], ['wcapp']);
    const columns = (version['additionalPrinterColumns'] as Node[]).filter((c) => c['priority'] === undefined).map((c) => c['name']);
    assert.deepEqual(columns, ['Lattice', 'Version', 'Ready', 'Status', 'Age']);
    const status = (openApi['properties'] as Record<string, Node>)['status']!;
    assert.ok((status['properties'] as Node)['observedGeneration'], 'Metacontroller writes status.observedGeneration');
  });

  it('accepts every valid wadm fixture converted to a WasmCloudApplication', () => {
    const ajv = new Ajv({ strict: false });
    const check = ajv.compile(openApi);
    for (const file of [
      'hello.yaml',
      'complex.yaml',
      'daemonscaler.yaml',
      'secrets-policy.yaml',
      'shared-http.yaml',
      'shared-http-dev.yaml',
    ]) {
      assert.ok(check(wasmApp(file).build()), `${file}: ${JSON.stringify(check.errors)}`);
    }
  });

  it('round-trips through YAML unchanged', () => {
    assert.deepEqual(yaml.load(renderCrdYaml()), buildCrd());
  });
});

describe('the generated WasmCloudLattice CRD', () => {
  it('is what manifests/lattice-crd.yaml holds (run `npm run crd` after changing src/schema/)', () => {
    const checkedIn = readFileSync(resolve(import.meta.dirname, '../../manifests/lattice-crd.yaml'), 'utf8');
    assert.equal(checkedIn, renderLatticeCrdYaml());
  });

  it('is cluster-scoped, with the status subresource, and HOSTS, APPS, READY, AGE as its columns', () => {
    assert.equal(latticeCrd.spec.scope, 'Cluster');
    const version = latticeCrd.spec.versions[0]!;
    assert.deepEqual(version['subresources'], { status: {} });
    const columns = (version['additionalPrinterColumns'] as Node[]).filter((c) => c['priority'] === undefined).map((c) => c['name']);
    assert.deepEqual(columns, ['Hosts', 'Apps', 'Ready', 'Age']);
    const status = (latticeApi['properties'] as Record<string, Node>)['status']!;
    assert.ok((status['properties'] as Node)['observedGeneration'], 'Metacontroller writes status.observedGeneration');
  });

  it('needs no spec: an object without one, or with an empty one, is valid', () => {
    const check = new Ajv({ strict: false }).compile(latticeApi);
    for (const obj of [{ metadata: { name: 'default' } }, { metadata: { name: 'default' }, spec: {} }])
      assert.ok(check(obj), JSON.stringify(check.errors));
  });

  it('refuses a lattice id that is not one subject token, and unknown fields', () => {
    const spec = compile(LatticeSpecSchema);
    assert.ok(spec({ lattice: 'Prod_EU', minHosts: 2, requiredHosts: [{ labels: { zone: 'eu' }, count: 2 }] }));
    assert.deepEqual(spec.problems({ lattice: 'a.b' }, 'spec'), ['spec.lattice: may contain only letters, digits, "-" and "_"']);
    assert.deepEqual(spec.problems({ minhosts: 1 }, 'spec'), ['spec.minhosts: is not a known field']);
    assert.deepEqual(spec.problems({ requiredHosts: [{ labels: {} }] }, 'spec'), [
      'spec.requiredHosts[0].labels: must NOT have fewer than 1 properties',
    ]);
  });

  it('round-trips through YAML unchanged', () => {
    assert.deepEqual(yaml.load(renderLatticeCrdYaml()), buildLatticeCrd());
  });
});
