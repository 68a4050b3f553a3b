// Generates the WasmCloudApplication CRD from the TypeBox schemas, so that request validation,
// the TypeScript types and what `kubectl explain` shows can never disagree.
import yaml from 'js-yaml';
import { ApplicationSpecSchema } from './application.js';
import { ApplicationStatusSchema } from './status.js';
import { celRules } from './kit.js';

export const GROUP = 'core.wasmcloud.com';
export const VERSION = 'v1beta1';
export const KIND = 'WasmCloudApplication';
export const PLURAL = 'wasmcloudapplications';
export const SHORT_NAME = 'wcapp';

type Node = Record<string, unknown>;

const readyCondition = '.status.conditions[?(@.type=="Ready")]';

export const PRINTER_COLUMNS = [
  { name: 'Lattice', type: 'string', jsonPath: '.status.lattice', description: 'Lattice the application is deployed to.' },
  { name: 'Version', type: 'string', jsonPath: '.status.version', description: 'Desired wadm version.' },
  { name: 'Ready', type: 'string', jsonPath: `${readyCondition}.status`, description: 'Ready condition.' },
  { name: 'Status', type: 'string', jsonPath: `${readyCondition}.message`, description: 'Ready condition message.' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  { name: 'Phase', type: 'string', jsonPath: '.status.phase', priority: 1, description: 'One-word summary.' },
  { name: 'Deployed', type: 'string', jsonPath: '.status.deployedVersion', priority: 1, description: 'Version wadm has deployed.' },
];

export function buildCrd(): Node {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${PLURAL}.${GROUP}`, labels: { 'app.kubernetes.io/name': 'wasmcloud-metacontroller' } },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: {
        kind: KIND,
        listKind: `${KIND}List`,
        plural: PLURAL,
        singular: KIND.toLowerCase(),
        shortNames: [SHORT_NAME],
        categories: ['wasmcloud'],
      },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          // Metacontroller ignores a parent without the status subresource.
          subresources: { status: {} },
          additionalPrinterColumns: PRINTER_COLUMNS,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description:
                'A wasmCloud application deployed to a lattice by wadm. The spec is the OAM Application spec of a wadm manifest (wash app deploy), plus lattice, version, suspend and deletion settings.',
              required: ['spec'],
              // The name becomes wadm's application name, one NATS subject token: no dots, which Kubernetes allows.
              ...celRules({ rule: "!self.metadata.name.contains('.')", message: 'metadata.name: a wadm application name cannot contain dots' }),
              properties: {
                apiVersion: { type: 'string', description: 'APIVersion of this object.' },
                kind: { type: 'string', description: 'Kind of this object.' },
                metadata: { type: 'object' },
                spec: structural(ApplicationSpecSchema),
                status: structural(ApplicationStatusSchema),
              },
            },
          },
        },
      ],
    },
  };
}

export function renderCrdYaml(): string {
  const header = '# Generated from src/schema/ by `npm run crd`; do not edit. test/crd.test.ts fails when it is stale.\n';
  return header + yaml.dump(buildCrd(), { lineWidth: -1, noRefs: true, quotingType: '"' });
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
    return { ...(rest['description'] !== undefined ? { description: rest['description'] } : {}), 'x-kubernetes-preserve-unknown-fields': true };
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
