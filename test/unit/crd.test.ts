import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv } from 'ajv';
import yaml from 'js-yaml';
import { buildCrd, renderCrdYaml } from '../../src/schema/crd.js';
import { buildWorkloadDeploymentCrd } from '../../src/schema/v2-crd.js';
import { wasmApp } from '../support/resources.js';

type Node = Record<string, unknown>;
type Crd = { spec: { names: Node; versions: Node[] } };
const crd = buildCrd() as Crd;
const version = crd.spec.versions[0]!;
const schemaOf = (of: Crd): Node => (of.spec.versions[0]!['schema'] as { openAPIV3Schema: Node }).openAPIV3Schema;
const openApi = schemaOf(crd);

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
    const nodes = [...walk(openApi, 'root'), ...walk(schemaOf(buildWorkloadDeploymentCrd() as Crd), 'v2')];
    for (const [path, node] of nodes) {
      assert.ok(node['type'] !== undefined || node['x-kubernetes-preserve-unknown-fields'] === true, `${path} has no type`);
      for (const banned of ['const', '$ref', '$id', '$schema', 'anyOf', 'oneOf', 'patternProperties']) {
        assert.equal(node[banned], undefined, `${path} has ${banned}`);
      }
      if (node['properties'] !== undefined)
        assert.equal(node['additionalProperties'], undefined, `${path} has properties and additionalProperties`);
    }
  });

  it('describes every spec and status field, for kubectl explain', () => {
    const props = openApi['properties'] as Record<string, Node>;
    for (const root of ['spec', 'status']) {
      for (const [path, node] of walk(props[root]!, root)) {
        if (path.endsWith('{}') || path.endsWith('[]')) continue; // map values and list items are described by their parent
        assert.equal(typeof node['description'], 'string', `${path} has no description`);
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
