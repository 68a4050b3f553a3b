// Generates the WasmCloudLattice CRD from the TypeBox schemas (src/schema/lattice.ts), as crd.ts
// does the WasmCloudApplication's: request validation, types and `kubectl explain` share them.
import { crdYaml, customResourceDefinition } from './crd-kit.js';
import { GROUP, VERSION } from './crd.js';
import { LatticeSpecSchema, WasmCloudLatticeStatusSchema } from './lattice.js';

export const LATTICE_KIND = 'WasmCloudLattice';
export const LATTICE_PLURAL = 'wasmcloudlattices';
export const LATTICE_SHORT_NAME = 'wclattice';

type Node = Record<string, unknown>;

const readyCondition = '.status.conditions[?(@.type=="Ready")]';

export const LATTICE_PRINTER_COLUMNS = [
  { name: 'Hosts', type: 'integer', jsonPath: '.status.hostCount', description: 'Hosts heartbeating in the lattice.' },
  { name: 'Apps', type: 'integer', jsonPath: '.status.applicationCount', description: 'Applications in the lattice.' },
  { name: 'Ready', type: 'string', jsonPath: `${readyCondition}.status`, description: 'Ready condition.' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  { name: 'Lattice', type: 'string', jsonPath: '.status.lattice', priority: 1, description: 'The lattice id.' },
  { name: 'Wadm', type: 'boolean', jsonPath: '.status.wadmReachable', priority: 1, description: "Whether the lattice's wadm answers." },
  { name: 'Status', type: 'string', jsonPath: `${readyCondition}.message`, priority: 1, description: 'Ready condition message.' },
];

export function buildLatticeCrd(): Node {
  return customResourceDefinition({
    group: GROUP,
    version: VERSION,
    kind: LATTICE_KIND,
    plural: LATTICE_PLURAL,
    scope: 'Cluster',
    specRequired: false,
    shortNames: [LATTICE_SHORT_NAME],
    categories: ['wasmcloud'],
    labels: { 'app.kubernetes.io/name': 'wasmcloud-metacontroller' },
    // Metacontroller ignores a parent without the status subresource.
    subresources: { status: {} },
    printerColumns: LATTICE_PRINTER_COLUMNS,
    description:
      'A wasmCloud lattice, as the platform team sees it: its hosts (from their heartbeats), its applications (from wadm) and the namespaces the lattice policy lets use it. Cluster-scoped; named as the lattice, or naming it in spec.lattice.',
    // Without spec.lattice the name is the lattice id, one NATS subject token: no dots, which
    // Kubernetes allows. Kept with spec.lattice too, as for WasmCloudApplication names.
    name: { type: 'string', pattern: '^[^.]+$' },
    spec: LatticeSpecSchema,
    status: WasmCloudLatticeStatusSchema,
  });
}

export function renderLatticeCrdYaml(): string {
  return crdYaml(
    buildLatticeCrd(),
    '# Generated from src/schema/ by `npm run crd`; do not edit. test/unit/crd.test.ts fails when it is stale.\n',
  );
}
