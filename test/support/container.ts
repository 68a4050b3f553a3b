// The product image run as a Kubernetes Deployment runs its pod, on the Docker engine that
// scripts/lib/docker-engine.sh started (IMAGE_TEST_DOCKER, IMAGE_TEST_SOCKET): the pod's and the
// container's securityContext as `docker run` flags, the ConfigMap's variables, host networking
// on loopback. Used by the image tier (test/image) and the release tier (test/release).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

export type Obj = Record<string, any>;

export interface DockerResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function required(name: string): string {
  const value = process.env[name];
  if (!value)
    throw new Error(`${name} is not set: run this file through its tier's script (scripts/image-test.sh, scripts/release-test.sh)`);
  return value;
}

export function docker(args: string[], input?: string): DockerResult {
  const run = spawnSync(required('IMAGE_TEST_DOCKER'), ['-H', `unix://${required('IMAGE_TEST_SOCKET')}`, ...args], {
    input,
    encoding: 'utf8',
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** `docker run` flags for the pod's and the container's securityContext of a Deployment. */
export function securityFlags(deployment: Obj): string[] {
  const pod = deployment['spec'].template.spec;
  const context = { ...pod.securityContext, ...pod.containers[0].securityContext } as Obj;
  assert.equal(context['readOnlyRootFilesystem'], true);
  assert.equal(context['allowPrivilegeEscalation'], false);
  assert.deepEqual(context['capabilities'].drop, ['ALL']);
  // RuntimeDefault: the engine's default seccomp profile, which applies unless disabled.
  assert.equal(context['seccompProfile'].type, 'RuntimeDefault');
  const [user, group] = [context['runAsUser'], context['runAsGroup']] as number[];
  return ['--user', `${user}:${group}`, '--read-only', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges'];
}

/** The variables of a `KEY=value` file (manifests/config.env), comments left out. */
export function parseEnvFile(text: string): Record<string, string> {
  const pairs = text
    .split('\n')
    .filter((l) => /^[A-Z_]+=/.test(l))
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]);
  return Object.fromEntries(pairs);
}

/** `-e` flags: the given variables, the overrides replacing theirs. */
export function environmentFlags(variables: Record<string, string>, overrides: Record<string, string>): string[] {
  return Object.entries({ ...variables, ...overrides }).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
}

export async function statusOf(url: string, init?: RequestInit): Promise<number | undefined> {
  try {
    return (await fetch(url, init)).status;
  } catch {
    return undefined; // not listening yet
  }
}
