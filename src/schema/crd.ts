// Generates the WasmCloudApplication CRD from the TypeBox schemas, so that request validation,
// the TypeScript types and what `kubectl explain` shows can never disagree.
import { ApplicationSpecSchema } from './application.js';
import { ApplicationStatusSchema } from './status.js';
import { crdYaml, customResourceDefinition } from './crd-kit.js';

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
  return customResourceDefinition({
    group: GROUP,
    version: VERSION,
    kind: KIND,
    plural: PLURAL,
    shortNames: [SHORT_NAME],
    categories: ['wasmcloud'],
    labels: { 'app.kubernetes.io/name': 'wasmcloud-metacontroller' },
    // Metacontroller ignores a parent without the status subresource.
    subresources: { status: {} },
    printerColumns: PRINTER_COLUMNS,
    description:
      'A wasmCloud application deployed to a lattice by wadm. The spec is the OAM Application spec of a wadm manifest (wash app deploy), plus lattice, version, suspend and deletion settings.',
    // The name becomes wadm's application name, one NATS subject token: no dots, which Kubernetes allows.
    // A pattern on the field, not a CEL rule on the whole object: the API server evaluates a root rule on
    // every update (a finalizer's removal included), so a resource named with a dot before this check
    // existed (0.1.0 only refused it in the hook) could never be deleted. A pattern on an unchanged name
    // is ratcheted (GA and always on from Kubernetes 1.33, the chart's floor): it stops creation only
    // (test/kube/upgrade.test.ts, on every version of scripts/kube-matrix.sh too).
    name: { type: 'string', pattern: '^[^.]+$' },
    spec: ApplicationSpecSchema,
    status: ApplicationStatusSchema,
  });
}

export function renderCrdYaml(): string {
  return crdYaml(buildCrd(), '# Generated from src/schema/ by `npm run crd`; do not edit. test/unit/crd.test.ts fails when it is stale.\n');
}
