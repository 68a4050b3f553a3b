// The demo's story, told through the Metacontroller emulator against the running service:
// apply hello-world, edit it, revert the edit, delete it — each step synced the way Metacontroller
// syncs (again at once after a status write, else after the resync the hook asks for) and shown
// as `kubectl get wcapp` would show it, until the state the step waits for.
import { setTimeout as sleep } from 'node:timers/promises';
import { condition, nextDelayMs, type FakeMetacontroller, type K8sObject } from '../../test/support/metacontroller.js';
import type { SimulatedLattice } from '../../test/support/host-sim.js';
import { WADM_STALL_TOLERANT_MS } from '../../test/support/host-sim.js';
import { until } from '../../test/support/wait.js';
import { DemoError } from './prepare.js';
import { LiveTable } from './table.js';

/** Metacontroller would wait up to a minute for a resync; the demo looks at least every second. */
const MAX_PAUSE_MS = 1000;
/** A safety net, not a expectation: wadm may stall ~35 s now and then (see host-sim/wadm-ready.ts). */
const STEP_TIMEOUT_MS = WADM_STALL_TOLERANT_MS + 30_000;

export interface Stage {
  mc: FakeMetacontroller;
  lattice: SimulatedLattice;
  table: LiveTable;
  say(line: string): void;
  signal: AbortSignal;
}

type Resource = K8sObject & { spec: { components: { traits?: { type: string; properties: Record<string, unknown> }[] }[] } };

/** Ready=True for the current generation: what `kubectl wait --for=condition=Ready` waits for. */
function readyAt(obj: K8sObject | undefined): boolean {
  const ready = condition(obj, 'Ready');
  return ready?.status === 'True' && ready.observedGeneration === obj?.metadata.generation;
}

/** Syncs the resource until `done` holds for it, redrawing its table row after every pass. */
async function syncUntil(
  stage: Stage,
  obj: K8sObject,
  what: string,
  done: (obj: K8sObject | undefined) => boolean,
): Promise<K8sObject | undefined> {
  const { namespace = 'default', name } = obj.metadata;
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  for (;;) {
    const pass = await stage.mc.reconcile(namespace, name);
    const current = stage.mc.get(namespace, name);
    if (current) stage.table.show([current]);
    if (done(current)) {
      stage.table.done();
      return current;
    }
    if (Date.now() > deadline) {
      stage.table.done();
      const message = condition(current, 'Ready')?.message ?? pass.error ?? 'no status';
      throw new DemoError(`${namespace}/${name} did not become ${what} within ${STEP_TIMEOUT_MS / 1000} s (last: ${message})`);
    }
    await sleep(Math.min(nextDelayMs(pass) ?? MAX_PAUSE_MS, MAX_PAUSE_MS), undefined, { signal: stage.signal });
  }
}

function describeHost(lattice: SimulatedLattice): string {
  const components = lattice.components().map((c) => `${c.id} ×${c.maxInstances}`);
  const providers = lattice.providers().map((p) => p.id);
  const host = lattice.hosts[0]?.friendlyName ?? 'the host';
  if (components.length + providers.length === 0) return `${host} runs nothing`;
  return `${host} runs ${[...components, ...providers].join(', ')}`;
}

function withInstances(resource: Resource, instances: number): Resource {
  const edited = structuredClone(resource);
  const scaler = edited.spec.components[0]!.traits!.find((t) => t.type === 'spreadscaler')!;
  scaler.properties['instances'] = instances;
  return edited;
}

/** Waits for the simulated host to run what wadm was told (wadm acts after the status is written). */
async function untilHost(stage: Stage, done: () => boolean): Promise<void> {
  await until(() => stage.signal.aborted || done(), {
    what: 'the simulated host to follow wadm',
    timeoutMs: STEP_TIMEOUT_MS,
    intervalMs: 50,
  });
  stage.signal.throwIfAborted();
}

export async function runScenario(stage: Stage, resource: Resource, file: string): Promise<void> {
  const { namespace = 'default', name } = resource.metadata;
  const { say, mc, lattice } = stage;
  const instances = (resource.spec.components[0]!.traits!.find((t) => t.type === 'spreadscaler')!.properties['instances'] as number) ?? 1;

  say(`[1/4] kubectl apply -f ${file}`);
  const first = (await syncUntil(stage, mc.apply(resource), 'Ready', readyAt))!;
  const firstVersion = String(first.status?.['version']);
  await untilHost(stage, () => lattice.components().some((c) => c.maxInstances === instances));
  say(`      Ready: ${namespace}/${name} runs version ${firstVersion}; ${describeHost(lattice)}`);

  say(`[2/4] edit: the spreadscaler's instances ${instances} → ${instances + 1} (as kubectl edit wcapp ${name} would)`);
  const edited = (await syncUntil(stage, mc.apply(withInstances(resource, instances + 1)), 'Ready', readyAt))!;
  const editedVersion = String(edited.status?.['version']);
  await untilHost(stage, () => lattice.components().some((c) => c.maxInstances === instances + 1));
  say(`      new version ${editedVersion} is Ready (was ${firstVersion}); ${describeHost(lattice)}`);

  say(`[3/4] revert the edit (as git revert would): instances back to ${instances}`);
  const reverted = (await syncUntil(stage, mc.apply(resource), 'Ready', readyAt))!;
  const revertedVersion = String(reverted.status?.['version']);
  if (revertedVersion !== firstVersion) throw new DemoError(`the revert gave version ${revertedVersion}, not ${firstVersion}`);
  await untilHost(stage, () => lattice.components().some((c) => c.maxInstances === instances));
  say(`      version ${firstVersion} is Ready again: wadm redeployed the version it kept, nothing new was put`);

  say(`[4/4] kubectl delete wcapp ${name}`);
  mc.delete(namespace, name);
  await syncUntil(stage, resource, 'finalized', (obj) => obj === undefined);
  await untilHost(stage, () => lattice.components().length + lattice.providers().length === 0);
  say(`      finalized: the finalize hook deleted ${name} from wadm and the finalizer is gone; ${describeHost(lattice)}`);
}
