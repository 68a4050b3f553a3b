// What belongs to the application as a whole: its name, labels and annotations, and the fields of a
// WasmCloudApplication that describe wadm (lattice, versions, deletion) rather than the workload.
import type { ValidSpec } from '../core/validate.js';
import { DESCRIPTION_ANNOTATION } from '../core/names.js';
import { SECRET_POLICY_TYPE } from '../schema/kit.js';
import { approximated, dropped, mapped, type Finding } from './report.js';

const SHARED_ANNOTATION = 'experimental.wasmcloud.dev/shared';

export interface ApplicationMetadata {
  labels: Record<string, string> | undefined;
  annotations: Record<string, string> | undefined;
  findings: Finding[];
}

export function nameFinding(app: ValidSpec, name: string): Finding {
  if (name === app.ref.name) return mapped('metadata.name', `→ metadata.name "${name}"`);
  return approximated('metadata.name', `"${app.ref.name}" is not a Kubernetes name: → metadata.name "${name}"`);
}

export function metadataOf(app: ValidSpec): ApplicationMetadata {
  const findings: Finding[] = [];
  const annotations: Record<string, string> = {};
  for (const [key, value] of Object.entries(app.annotations)) {
    const path = `metadata.annotations[${JSON.stringify(key)}]`;
    if (key === SHARED_ANNOTATION) {
      findings.push(
        dropped(path, 'a shared application: v2 has no sharing between applications, each workload declares its own hostInterfaces'),
      );
      continue;
    }
    annotations[key] = value;
    findings.push(mapped(path, '→ metadata.annotations'));
  }
  if (app.spec.description !== undefined) {
    annotations[DESCRIPTION_ANNOTATION] = app.spec.description;
    findings.push(mapped('spec.description', `→ metadata.annotations.${DESCRIPTION_ANNOTATION}`));
  }
  const labels = Object.keys(app.labels).length > 0 ? { ...app.labels } : undefined;
  if (labels !== undefined) findings.push(mapped('metadata.labels', '→ metadata.labels'));
  return { labels, annotations: Object.keys(annotations).length > 0 ? annotations : undefined, findings };
}

/** The WasmCloudApplication fields beyond wadm's manifest, reported only when they are set. */
export function specFieldFindings(app: ValidSpec): Finding[] {
  const { lattice, deletionPolicy, suspend, revisionHistoryLimit, version } = app.spec;
  const findings: Finding[] = [];
  if (app.pinnedVersion !== undefined) {
    const path = version !== undefined ? 'spec.version' : 'metadata.annotations.version';
    findings.push(
      dropped(path, `version "${app.pinnedVersion}": v2 keeps no versions, a WorkloadDeployment rolls out each change of its spec`),
    );
  }
  if (lattice !== undefined)
    findings.push(dropped('spec.lattice', `lattice "${lattice}": v2 has no lattices, hostSelector chooses the hosts`));
  if (deletionPolicy === 'Delete')
    findings.push(mapped('spec.deletionPolicy', 'Delete: deleting the WorkloadDeployment stops the workload'));
  if (deletionPolicy === 'Orphan')
    findings.push(dropped('spec.deletionPolicy', 'Orphan: deleting a WorkloadDeployment always stops its workload'));
  if (suspend === true) findings.push(approximated('spec.suspend', 'true → spec.replicas 0 (the deployment stays, nothing runs)'));
  if (suspend === false) findings.push(mapped('spec.suspend', 'false: the workload runs'));
  if (revisionHistoryLimit !== undefined) findings.push(dropped('spec.revisionHistoryLimit', 'v2 keeps no version history to limit'));
  return findings;
}

export function policyFindings(app: ValidSpec): Finding[] {
  return (app.spec.policies ?? []).map((policy, p) =>
    dropped(
      `spec.policies[${p}]`,
      policy.type === SECRET_POLICY_TYPE
        ? `secret policy "${policy.name}" (backend "${policy.properties['backend']}"): v2 reads secrets from Kubernetes Secrets (see the secrets that use it)`
        : `policy "${policy.name}" (${policy.type}): v2 has no policies`,
    ),
  );
}
