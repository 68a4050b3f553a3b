// Turns TypeBox schemas into a CustomResourceDefinition: one builder for our WasmCloudApplication CRD
// (src/schema/crd.ts) and for the wasmCloud v2 CRDs the tests install (src/schema/v2-crd.ts), so that
// what Ajv checks and what a real API server checks come from the same schema.
import yaml from 'js-yaml';
import type { TSchema } from '@sinclair/typebox';
import { celRules, type CelRule } from './kit.js';

type Node = Record<string, unknown>;

export interface CrdDefinition {
  group: string;
  version: string;
  /** Namespaced unless said otherwise. */
  scope?: 'Namespaced' | 'Cluster';
  /** Whether an object must have a spec (default true); false for a resource whose spec is all optional. */
  specRequired?: boolean;
  kind: string;
  plural: string;
  shortNames?: string[];
  categories?: string[];
  labels?: Record<string, string>;
  subresources: Node;
  printerColumns: Node[];
  /** What `kubectl explain KIND` says. */
  description: string;
  /** CEL rules on the whole object (they may read metadata.name). */
  rules?: CelRule[];
  /** The schema of metadata.name (the only metadata field a CRD may restrict besides generateName). */
  name?: Node;
  spec: TSchema;
  status: TSchema;
}

/** A served and stored single-version CRD (namespaced unless `scope` says otherwise) whose spec and status are structural copies of the schemas. */
export function customResourceDefinition(def: CrdDefinition): Node {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${def.plural}.${def.group}`, ...(def.labels !== undefined ? { labels: def.labels } : {}) },
    spec: {
      group: def.group,
      scope: def.scope ?? 'Namespaced',
      names: {
        kind: def.kind,
        listKind: `${def.kind}List`,
        plural: def.plural,
        singular: def.kind.toLowerCase(),
        ...(def.shortNames !== undefined ? { shortNames: def.shortNames } : {}),
        ...(def.categories !== undefined ? { categories: def.categories } : {}),
      },
      versions: [
        {
          name: def.version,
          served: true,
          storage: true,
          subresources: def.subresources,
          additionalPrinterColumns: def.printerColumns,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: def.description,
              ...(def.specRequired === false ? {} : { required: ['spec'] }),
              ...(def.rules !== undefined ? celRules(...def.rules) : {}),
              properties: {
                apiVersion: { type: 'string', description: 'APIVersion of this object.' },
                kind: { type: 'string', description: 'Kind of this object.' },
                metadata: def.name !== undefined ? { type: 'object', properties: { name: def.name } } : { type: 'object' },
                spec: structural(def.spec),
                status: structural(def.status),
              },
            },
          },
        },
      ],
    },
  };
}

/** YAML as `kubectl apply -f` reads it: stable key order, no line folding, no anchors. */
export function crdYaml(crd: Node, header = ''): string {
  return header + yaml.dump(crd, { lineWidth: -1, noRefs: true, quotingType: '"' });
}

/**
 * TypeBox emits JSON Schema; a CRD needs a structural schema: no `additionalProperties` beside
 * `properties` (unknown fields are pruned instead), and no typed `anyOf` branches — a value of
 * several types is kept as is and checked by our own validation.
 */
export function structural(schema: unknown): Node {
  const node = JSON.parse(JSON.stringify(schema)) as Node; // drops TypeBox's symbol keys
  return convert(node);
}

function convert(node: Node): Node {
  const { $id, $schema, anyOf, oneOf, additionalProperties, patternProperties, ...rest } = node;
  void $id;
  void $schema;
  if (patternProperties !== undefined) throw new Error('patternProperties cannot be expressed in a CRD: use StringMap');
  const union = anyOf ?? oneOf;
  if (union !== undefined) {
    return {
      ...(rest['description'] !== undefined ? { description: rest['description'] } : {}),
      'x-kubernetes-preserve-unknown-fields': true,
    };
  }
  const out: Node = { ...rest };
  if (typeof out['properties'] === 'object') {
    out['properties'] = Object.fromEntries(Object.entries(out['properties'] as Record<string, Node>).map(([k, v]) => [k, convert(v)]));
  } else if (typeof additionalProperties === 'object') {
    out['additionalProperties'] = convert(additionalProperties as Node);
  }
  if (typeof out['items'] === 'object') out['items'] = convert(out['items'] as Node);
  return out;
}
