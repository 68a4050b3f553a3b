// A lattice filled straight over wadm's API (past the relay), as other tools of a platform team fill
// it: deployed applications rendered from the wadm fixtures, and undeployed models with long names.
// For test/lattice/busy-lattice.test.ts, with the hosts and the config those fixtures ask for.
import yaml from 'js-yaml';
import { JSONCodec, type NatsConnection } from 'nats';
import { fixtureText } from './fixtures.js';
import type { StringMap } from './host-sim.js';

/** What the fill needs of wadm: a request by operation (`put`, `deploy.NAME`), its reply parsed. */
export type WadmRequest = (operation: string, body: string) => Promise<{ result: string; message?: string } & Record<string, unknown>>;

/** A wadm manifest as the fill renders it: only what it changes is typed. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; annotations?: StringMap };
  spec: { components: { properties: { id?: string } }[] };
}

/**
 * The fixtures a deployed application is rendered from, in turn: a component with a spreadscaler
 * and a provider linked to it with source config (hello); daemonscalers on a component and a
 * provider, with the legacy link form (daemonscaler); explicit ids, config with and without
 * properties, weighted spreads with requirements and links with target config (complex).
 */
const DEPLOYED_FIXTURES = ['hello.yaml', 'daemonscaler.yaml', 'complex.yaml'].map((file) => yaml.load(fixtureText(file)) as Manifest);

/**
 * The hosts complex.yaml's spreads ask for: one in each of its regions, and two in us-taylor-west,
 * since its http server's westcoast spread wants two instances there and a host runs a provider once.
 */
export const REGION_HOSTS: StringMap[] = [
  { region: 'us-brooks-east' },
  { region: 'us-taylor-west' },
  { region: 'us-taylor-west' },
  { region: 'moon' },
];

/** The named config complex.yaml's component reads without giving it: wadm expects it to exist already. */
const EXTERNAL_CONFIG = 'blobby-default-configuration-values';

/** The `index`-th deployed application: a fixture in turn, named apart, with ids of its own. */
export function renderedApp(index: number): Manifest {
  const manifest = structuredClone(DEPLOYED_FIXTURES[index % DEPLOYED_FIXTURES.length]!);
  const suffix = String(index).padStart(3, '0');
  manifest.metadata.name = `${manifest.metadata.name}-${suffix}`;
  // wadm refuses to deploy an explicit id that another deployed application uses.
  for (const { properties } of manifest.spec.components) if (properties.id) properties.id = `${properties.id}_${suffix}`;
  return manifest;
}

/** An undeployed model with nothing in it, named `length` characters long. */
export function undeployedModel(index: number, length: number): Manifest {
  return {
    apiVersion: 'core.oam.dev/v1beta1',
    kind: 'Application',
    metadata: { name: `imported-${String(index).padStart(5, '0')}-`.padEnd(length, 'x'), annotations: { version: 'v1' } },
    spec: { components: [] },
  };
}

/**
 * Puts the config complex.yaml expects to find into the lattice, as `wash config put` does: over
 * the hosts' control interface, where wadm reads it.
 */
export async function putExternalConfig(nc: NatsConnection, lattice: string): Promise<void> {
  const json = JSONCodec<Record<string, unknown>>();
  const reply = json.decode(
    (await nc.request(`wasmbus.ctl.v1.${lattice}.config.put.${EXTERNAL_CONFIG}`, json.encode({ greeting: 'hello' }))).data,
  );
  if (reply['success'] !== true) throw new Error(`config put: ${JSON.stringify(reply)}`);
}

/** Retries that wadm's own index conflicts need: each put rewrites the lattice's index. */
const ATTEMPTS = 10;

/** Puts a model; returns the version wadm stored (or already had, when a retry finds it). */
export async function put(wadm: WadmRequest, manifest: Manifest): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const reply = await wadm('put', JSON.stringify(manifest));
    if (reply.result === 'created' || reply.result === 'newversion') return String(reply['current_version']);
    if (/already exists/.test(reply.message ?? '')) return manifest.metadata.annotations?.['version'] ?? '';
    if (attempt === ATTEMPTS) throw new Error(`put ${manifest.metadata.name}: ${JSON.stringify(reply)}`);
  }
}

/** Puts and deploys an application, as `wash app deploy` does. */
export async function putAndDeploy(wadm: WadmRequest, manifest: Manifest): Promise<void> {
  const version = await put(wadm, manifest);
  for (let attempt = 1; ; attempt++) {
    const reply = await wadm(`deploy.${manifest.metadata.name}`, JSON.stringify({ version }));
    if (reply.result === 'acknowledged') return;
    if (attempt === ATTEMPTS) throw new Error(`deploy ${manifest.metadata.name}: ${JSON.stringify(reply)}`);
  }
}

/** Runs `work(0)` … `work(count - 1)`, `workers` at a time. */
export async function inParallel(count: number, workers: number, work: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < count; index = next++) await work(index);
  };
  await Promise.all(Array.from({ length: workers }, worker));
}

/** The applications whose components or providers the hosts run, by the name wadm annotates them with. */
export function runningApps(instances: { annotations: StringMap }[]): Set<string> {
  return new Set(instances.map((i) => i.annotations['wasmcloud.dev/appspec']).filter((name) => name !== undefined));
}

/** How many of the applications have each last status wadm published (`none`: none yet), from its status stream. */
export async function statusCounts(nc: NatsConnection, lattice: string, names: string[]): Promise<Record<string, number>> {
  const jsm = await nc.jetstreamManager();
  const counts: Record<string, number> = {};
  for (const name of names) {
    const type = await jsm.streams.getMessage('wadm_status', { last_by_subj: `wadm.status.${lattice}.${name}` }).then(
      (m) => m.json<{ status: { type: string } }>().status.type,
      () => 'none',
    );
    counts[type] = (counts[type] ?? 0) + 1;
  }
  return counts;
}
