// The last gate before printing: every resource against our v2 schema, the operator's CEL rules on
// hostInterfaces that a JSON schema cannot say, and names unique among the resources printed.
import { compile } from '../schema/validator.js';
import { hostInterfaceProblems, WorkloadDeploymentSchema, type WorkloadDeployment } from '../schema/v2.js';

const checkDeployment = compile<WorkloadDeployment>(WorkloadDeploymentSchema);

export function v2Problems(resources: readonly unknown[]): string[] {
  const seen = new Set<string>();
  return resources.flatMap((resource, i) => {
    const at = `resources[${i}]`;
    if (!checkDeployment(resource)) return checkDeployment.problems(resource, at, 20);
    const { name, namespace } = resource.metadata;
    const key = `${namespace ?? ''}/${name}`;
    const problems = seen.has(key) ? [`${at}.metadata.name: "${name}" is already used by an earlier resource`] : [];
    seen.add(key);
    const interfaces = resource.spec.template.spec.hostInterfaces ?? [];
    return [...problems, ...hostInterfaceProblems(interfaces, `${at}.spec.template.spec.hostInterfaces`)];
  });
}
