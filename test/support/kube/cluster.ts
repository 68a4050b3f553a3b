// A real control plane for a test file: etcd and kube-apiserver (built by scripts/test-deps.sh) on
// free loopback ports, with the API server's self-signed serving certificate, a fresh service
// account key and a static token for kubectl, all in one temp dir. AlwaysAllow by default: most
// tests judge the CRD and the API semantics, not RBAC. With `rbac`, the API server authorizes with
// RBAC, each named user gets a token of its own (a kubeconfig user of that name), and
// kube-controller-manager runs its clusterrole-aggregation controller alone, which fills the
// built-in admin, edit and view roles from the ClusterRoles labelled for them. Nothing listens
// beyond 127.0.0.1.
import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient } from './client.js';
import { binaryFrom, removedAtExit, startProcess, untilReady, type ServerProcess } from '../processes.js';
import { freePort } from '../ports.js';

// Generous: both binaries start in a few seconds, but CI shares 2 cores with other work.
const START_TIMEOUT_MS = 120_000;

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface KubeCluster {
  readonly client: KubeClient;
  readonly kubeconfig: string;
  /** Runs kubectl against this cluster (asynchronously: an in-process hook service keeps serving meanwhile). */
  kubectl(args: string[], options?: { input?: string }): Promise<KubectlResult>;
  /** Like kubectl(), but throws with stderr unless it exits 0; returns stdout. */
  kubectlOk(args: string[], options?: { input?: string }): Promise<string>;
  /** Runs helm (HELM_BIN) against this cluster; throws with its output unless it exits 0; returns stdout. */
  helmOk(args: string[]): Promise<string>;
  stop(): Promise<void>;
}

export interface KubeClusterOptions {
  /** RBAC instead of AlwaysAllow; these users (no groups) authenticate with tokens of their own. */
  rbac?: { users: string[] };
}

export async function startKubeCluster(options: KubeClusterOptions = {}): Promise<KubeCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'kube-test-'));
  const removeDir = removedAtExit(dir);
  const started: ServerProcess[] = [];
  const stop = async (): Promise<void> => {
    for (const process of started.reverse()) await process.stop();
    removeDir();
  };
  try {
    const etcdUrl = await startEtcd(dir, started);
    const { client, kubeconfig } = await startApiServer(dir, etcdUrl, started, options.rbac?.users);
    if (options.rbac) await startRoleAggregation(client, kubeconfig, started);
    const kubectlBin = binaryFrom('KUBECTL_BIN');
    const kubectl = (args: string[], options: { input?: string } = {}) => runKubectl(kubectlBin, kubeconfig, args, options.input);
    return {
      client,
      kubeconfig,
      kubectl,
      async kubectlOk(args, options) {
        const run = await kubectl(args, options);
        if (run.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${run.code}:\n${run.stderr}`);
        return run.stdout;
      },
      helmOk: (args) => runHelm(kubeconfig, args),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function startEtcd(dir: string, started: ServerProcess[]): Promise<string> {
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const clientUrl = `http://127.0.0.1:${clientPort}`;
  const peerUrl = `http://127.0.0.1:${peerPort}`;
  const etcd = startProcess('etcd', binaryFrom('ETCD_BIN'), [
    '--name',
    'test',
    '--data-dir',
    join(dir, 'etcd'),
    '--log-level',
    'warn',
    '--logger',
    'zap',
    '--listen-client-urls',
    clientUrl,
    '--advertise-client-urls',
    clientUrl,
    '--listen-peer-urls',
    peerUrl,
    '--initial-advertise-peer-urls',
    peerUrl,
    '--initial-cluster',
    `test=${peerUrl}`,
  ]);
  started.push(etcd);
  await untilReady(
    etcd,
    async () => {
      const res = await fetch(`${clientUrl}/health`);
      return res.ok && ((await res.json()) as { health?: string }).health === 'true';
    },
    START_TIMEOUT_MS,
  );
  return clientUrl;
}

async function startApiServer(
  dir: string,
  etcdUrl: string,
  started: ServerProcess[],
  rbacUsers: string[] | undefined,
): Promise<{ client: KubeClient; kubeconfig: string }> {
  const port = await freePort();
  const token = randomBytes(24).toString('hex');
  const users = (rbacUsers ?? []).map((name) => ({ name, token: randomBytes(24).toString('hex') }));
  const serviceAccountKey = generateKeyPairSync('rsa', { modulusLength: 2048 });
  writeFileSync(join(dir, 'sa.key'), serviceAccountKey.privateKey.export({ type: 'pkcs8', format: 'pem' }));
  writeFileSync(join(dir, 'sa.pub'), serviceAccountKey.publicKey.export({ type: 'spki', format: 'pem' }));
  const tokens = [`${token},test-admin,test-admin,"system:masters"`, ...users.map((u) => `${u.token},${u.name},${u.name}`)];
  writeFileSync(join(dir, 'tokens.csv'), `${tokens.join('\n')}\n`);
  const apiServer = startProcess('kube-apiserver', binaryFrom('KUBE_APISERVER_BIN'), [
    `--etcd-servers=${etcdUrl}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    // No endpoints for the `kubernetes` Service, which nothing here reads: from 1.37 the default
    // (lease) reconciler refuses a loopback address to put in them, and the API server will not start.
    '--endpoint-reconciler-type=none',
    `--secure-port=${port}`,
    `--cert-dir=${join(dir, 'certs')}`,
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${join(dir, 'sa.pub')}`,
    `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
    `--authorization-mode=${rbacUsers ? 'RBAC' : 'AlwaysAllow'}`,
    `--token-auth-file=${join(dir, 'tokens.csv')}`,
    '--service-cluster-ip-range=10.0.0.0/24',
    '--enable-priority-and-fairness=false',
    '--profiling=false',
    '--v=0',
  ]);
  started.push(apiServer);
  const url = `https://127.0.0.1:${port}`;
  // Written by kube-apiserver at start: the serving certificate followed by the CA that signed it.
  const caFile = join(dir, 'certs', 'apiserver.crt');
  let client: KubeClient | undefined;
  await untilReady(
    apiServer,
    async () => {
      client ??= new KubeClient(url, token, readFileSync(caFile));
      // Ready, and the default namespace made by the bootstrap controller exists.
      return (
        (await client.request('GET', '/readyz')).status === 200 &&
        (await client.request('GET', '/api/v1/namespaces/default')).status === 200
      );
    },
    START_TIMEOUT_MS,
  );
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster: { server: url, 'certificate-authority': caFile } }],
      users: [{ name: 'test-admin', user: { token } }, ...users.map((u) => ({ name: u.name, user: { token: u.token } }))],
      contexts: [{ name: 'test', context: { cluster: 'test', user: 'test-admin', namespace: 'default' } }],
      'current-context': 'test',
    }),
  );
  return { client: client!, kubeconfig };
}

/** kube-controller-manager with the clusterrole-aggregation controller alone, as test-admin; ready
 *  once it has filled the built-in `view` role, which the API server creates empty. */
async function startRoleAggregation(client: KubeClient, kubeconfig: string, started: ServerProcess[]): Promise<void> {
  const controllerManager = startProcess('kube-controller-manager', binaryFrom('KUBE_CONTROLLER_MANAGER_BIN'), [
    `--kubeconfig=${kubeconfig}`,
    '--controllers=clusterrole-aggregation',
    '--use-service-account-credentials=false',
    '--leader-elect=false',
    '--secure-port=0',
    '--v=0',
  ]);
  started.push(controllerManager);
  await untilReady(
    controllerManager,
    async () => {
      const view = await client.request('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/view');
      return view.status === 200 && ((view.body as { rules?: unknown[] }).rules?.length ?? 0) > 0;
    },
    START_TIMEOUT_MS,
  );
}

function runKubectl(binary: string, kubeconfig: string, args: string[], input?: string): Promise<KubectlResult> {
  return new Promise((resolve) => {
    // HOME points into nothing of the user's: kubectl caches discovery under it.
    const env = { PATH: process.env['PATH'] ?? '', KUBECONFIG: kubeconfig, HOME: join(kubeconfig, '..') };
    const child = execFile(binary, args, { env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

function runHelm(kubeconfig: string, args: string[]): Promise<string> {
  return new Promise((done, fail) => {
    execFile(
      binaryFrom('HELM_BIN'),
      [...args, '--kubeconfig', kubeconfig],
      // HOME points into nothing of the user's: helm keeps its cache and repositories under it.
      { env: { PATH: process.env['PATH'] ?? '', HOME: join(kubeconfig, '..') }, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => (error ? fail(new Error(`helm ${args.join(' ')} failed:\n${stdout}${stderr}`)) : done(stdout)),
    );
  });
}
