// The five settings that connect the service to a lattice (docs/install.md, "Connect to your
// lattice"), read back from installed or rendered objects where the service and Kubernetes read
// them; and examples/existing-lattice rendered with another lattice.yaml.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import yaml from 'js-yaml';
import { loadConfig } from '../../src/plumbing/config.js';
import { parsePolicy, type LatticePolicy } from '../../src/core/tenancy.js';
import { kustomize, type Obj } from './helm.js';

const ROOT = resolve(import.meta.dirname, '../..');
export const EXAMPLE = 'examples/existing-lattice';

export interface Connection {
  natsUrl: string;
  defaultLattice: string;
  policy: LatticePolicy;
  metacontrollerNamespace: string;
  /** The NetworkPolicy's NATS egress rule. */
  nats: { to: Obj[]; ports: Obj[] };
}

const one = (objects: Obj[], kind: string, name: string) => {
  const found = objects.filter((o) => o['kind'] === kind && o['metadata'].name === name);
  assert.equal(found.length, 1, `${kind}/${name}`);
  return found[0]!;
};

/** The settings where they are read, from the Deployment on: the ConfigMap it names, the policy
 *  file where LATTICE_POLICY_FILE points (a mounted ConfigMap), and the NetworkPolicy's rules. */
export function connectionOf(objects: Obj[]): Connection {
  const pod = one(objects, 'Deployment', 'wasmcloud-metacontroller')['spec'].template.spec as Obj;
  const container = pod['containers'][0] as Obj;
  const [{ configMapRef }] = container['envFrom'] as [{ configMapRef: { name: string } }];
  const env = one(objects, 'ConfigMap', configMapRef.name)['data'] as Record<string, string>;
  const loaded = loadConfig(env);
  assert.ok(loaded.ok, JSON.stringify(loaded));
  const path = env['LATTICE_POLICY_FILE']!;
  const mount = (container['volumeMounts'] as Obj[]).find((m) => m['mountPath'] === dirname(path))!;
  const volume = (pod['volumes'] as Obj[]).find((v) => v['name'] === mount['name'])!;
  const policy = parsePolicy(one(objects, 'ConfigMap', volume['configMap'].name)['data'][basename(path)]);
  const spec = one(objects, 'NetworkPolicy', 'wasmcloud-metacontroller')['spec'];
  const [peers, dns, nats] = spec.egress as Obj[];
  assert.equal(peers!['ports'][0].port, 8080);
  assert.equal(dns!['to'], undefined);
  return {
    natsUrl: env['NATS_URL']!,
    defaultLattice: env['DEFAULT_LATTICE']!,
    policy,
    metacontrollerNamespace: spec.ingress[0].from[0].namespaceSelector.matchLabels['kubernetes.io/metadata.name'],
    nats: { to: nats!['to'], ports: nats!['ports'] },
  };
}

/** examples/existing-lattice/lattice.yaml, as an object. */
export const exampleLattice = (): Obj => yaml.load(readFileSync(resolve(ROOT, EXAMPLE, 'lattice.yaml'), 'utf8')) as Obj;

/** A copy of examples/existing-lattice, its lattice.yaml changed by `edit` and `extra` added to
 *  its kustomization.yaml, rendered by kustomize. */
export function renderOverlay(edit: (lattice: Obj) => void, extra = ''): Obj[] {
  const dir = mkdtempSync(join(tmpdir(), 'existing-lattice-'));
  try {
    const lattice = exampleLattice();
    edit(lattice);
    writeFileSync(join(dir, 'lattice.yaml'), yaml.dump(lattice));
    // kustomize takes no absolute paths: the repository, relative to the temp dir.
    const kustomization = readFileSync(resolve(ROOT, EXAMPLE, 'kustomization.yaml'), 'utf8').replaceAll('../..', relative(dir, ROOT));
    writeFileSync(join(dir, 'kustomization.yaml'), `${kustomization}\n${extra}`);
    return kustomize(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
