// CustomResourceDefinitions of the wasmCloud v2 kinds `convert --to v2` writes, generated from our
// schemas in v2.ts, so that a real kube-apiserver can judge the converter's output
// (test/kube/v2-crd.test.ts). Test artefacts, not shipped: these kinds belong to wasmCloud's
// runtime-operator, whose Helm chart installs its own CRDs. The names, subresources and printer
// columns follow the operator's (charts/runtime-operator/crds/, wasmCloud/wasmCloud at 7cd553c).
import { crdYaml, customResourceDefinition } from './crd-kit.js';
import { V2_GROUP, V2_VERSION, WORKLOAD_DEPLOYMENT, WorkloadDeploymentSpecSchema, WorkloadDeploymentStatusSchema } from './v2.js';

type Node = Record<string, unknown>;

export const WORKLOAD_DEPLOYMENT_PLURAL = 'workloaddeployments';

export function buildWorkloadDeploymentCrd(): Node {
  return customResourceDefinition({
    group: V2_GROUP,
    version: V2_VERSION,
    kind: WORKLOAD_DEPLOYMENT,
    plural: WORKLOAD_DEPLOYMENT_PLURAL,
    subresources: {
      status: {},
      // `kubectl scale` and a HorizontalPodAutoscaler change spec.replicas through /scale.
      scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.currentReplicas', labelSelectorPath: '.status.selector' },
    },
    printerColumns: [
      { name: 'REPLICAS', type: 'integer', jsonPath: '.spec.replicas', description: 'Desired replicas.' },
      { name: 'READY', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status', description: 'Ready condition.' },
    ],
    description: 'Runs and scales a workload across wasmCloud v2 hosts (our schema of the runtime-operator API).',
    spec: WorkloadDeploymentSpecSchema,
    status: WorkloadDeploymentStatusSchema,
  });
}

/** Every v2 CRD, one YAML document each: one today, as convert writes only WorkloadDeployments. */
export function renderV2CrdsYaml(): string {
  return [buildWorkloadDeploymentCrd()].map((crd) => crdYaml(crd)).join('---\n');
}
