// Two first puts under one wadm key at the same moment, against the real wadm: the relay holds
// both puts until both resources have read the key empty, then lets the winner's through first
// and the loser's only once the winner's sync is done. wadm (one instance, one request at a time)
// adds the loser's put to the winner's model. The loser must notice, deploy nothing and say so;
// the winner's model stays deployed, and its next sync removes the loser's stray version.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { condition, type FakeMetacontroller, type K8sObject, type PassResult } from '../support/metacontroller.js';
import { wasmApp, type Resource } from '../support/resources.js';
import { startScenario, WADM_WAIT, type Scenario } from '../support/scenario.js';
import type { WadmRelay } from '../support/wadm-relay.js';

let scenario: Scenario;
let wadm: WadmRelay;

before(async () => {
  // The loser's put waits at the relay while the winner syncs: the longest wadm wait there is.
  scenario = await startScenario({ WADM_TIMEOUT_MS: '8000' });
  ({ wadm } = scenario);
});
after(() => scenario.stop());
beforeEach(() => scenario.reset());

const ready = (obj: K8sObject | undefined) => obj !== undefined && condition(obj, 'Ready')?.status === 'True';

interface Racer {
  resource: Resource;
  lattice: string;
  name: string;
}

/**
 * Both resources read the key empty (each put waits at the relay, so neither has reached wadm);
 * the winner's put goes first and its whole sync ends before the loser's put reaches wadm.
 */
async function race(mc: FakeMetacontroller, winner: Racer, loser: Racer): Promise<{ won: PassResult; lost: PassResult }> {
  const loserPut = wadm.hold('put', { lattice: loser.lattice });
  const winnerPut = wadm.hold('put', { lattice: winner.lattice });
  mc.apply(loser.resource as never);
  const losing = mc.reconcile(loser.resource.metadata.namespace!, loser.name);
  await loserPut.arrived;
  mc.apply(winner.resource as never);
  const winning = mc.reconcile(winner.resource.metadata.namespace!, winner.name);
  await winnerPut.arrived;
  winnerPut.release();
  const won = await winning;
  loserPut.release();
  return { won, lost: await losing };
}

function statusOf(mc: FakeMetacontroller, racer: Racer): { phase?: string; version?: string; message?: string } {
  return (mc.get(racer.resource.metadata.namespace!, racer.name) as { status: { phase?: string; version?: string; message?: string } })
    .status;
}

function reasonOf(mc: FakeMetacontroller, racer: Racer): string | undefined {
  return condition(mc.get(racer.resource.metadata.namespace!, racer.name)!, 'Ready')?.reason;
}

describe('two first puts of one name in one lattice, from two namespaces', () => {
  const winner: Racer = { resource: wasmApp().inNamespace('team-a').build(), lattice: 'default', name: 'hello-world' };
  const loser: Racer = { resource: wasmApp().inNamespace('team-b').build(), lattice: 'default', name: 'hello-world' };

  it('deploy only the winner; the loser says OwnershipConflict and names its stray version; the winner removes it', async () => {
    const mc = scenario.metacontroller();
    await race(mc, winner, loser);
    const won = statusOf(mc, winner).version!;
    const stray = statusOf(mc, loser).version!;
    assert.notEqual(won, stray);

    // One application in the key: the winner's, deployed; the loser's version inside it, never deployed.
    assert.deepEqual(await wadm.model('default', 'hello-world'), { versions: [won, stray], deployed: won });
    assert.equal(reasonOf(mc, loser), 'OwnershipConflict');
    assert.match(statusOf(mc, loser).message!, /belongs to a resource in another namespace/);
    assert.match(statusOf(mc, loser).message!, new RegExp(`wadm also holds version "${stray}" of this resource in it`));
    assert.doesNotMatch(statusOf(mc, loser).message!, /team-a/);
    assert.equal(wadm.count('deploy'), 1, "the winner's deploy only");

    // Another replica of the loser (this one's memory forgotten) says the same, and writes nothing.
    const putsBefore = wadm.count('put');
    scenario.running.service.knowledge.reset();
    await mc.reconcile('team-b', 'hello-world');
    assert.equal(reasonOf(mc, loser), 'OwnershipConflict');
    assert.equal(wadm.count('put'), putsBefore);
    assert.equal(wadm.count('del'), 0);

    // The winner, asking wadm afresh, removes the stray version and stays deployed.
    scenario.running.service.knowledge.reset();
    await mc.reconcile('team-a', 'hello-world');
    assert.deepEqual(await wadm.model('default', 'hello-world'), { versions: [won], deployed: won });
    await mc.waitFor('team-a', 'hello-world', ready, WADM_WAIT);
    assert.equal(wadm.count('deploy'), 1);
    await mc.reconcile('team-b', 'hello-world');
    assert.equal(reasonOf(mc, loser), 'OwnershipConflict');
    assert.doesNotMatch(statusOf(mc, loser).message!, /also holds/);
  });
});

describe('two first puts under one key from two lattices (`b-c` in `ra`, `c` in `ra-b`)', () => {
  const winner: Racer = {
    resource: wasmApp().inLattice('ra').named('b-c').inNamespace('tenant').build(),
    lattice: 'ra',
    name: 'b-c',
  };
  const loser: Racer = { resource: wasmApp().inLattice('ra-b').named('c').inNamespace('tenant').build(), lattice: 'ra-b', name: 'c' };

  it('the loser says NameCollision; the winner removes the stray of another name and keeps its model deployed', async () => {
    const mc = scenario.metacontroller();
    await race(mc, winner, loser);
    const won = statusOf(mc, winner).version!;
    const stray = statusOf(mc, loser).version!;
    // wadm read key ra-b-c for the loser's put and added to the winner's model.
    assert.deepEqual(await wadm.model('ra', 'b-c'), { versions: [won, stray], deployed: won });
    assert.equal(reasonOf(mc, loser), 'NameCollision');
    assert.match(statusOf(mc, loser).message!, /under the key "ra-b-c", which already holds an application of another lattice/);
    assert.match(statusOf(mc, loser).message!, new RegExp(`wadm also holds version "${stray}" of this resource in it`));
    assert.doesNotMatch(statusOf(mc, loser).message!, /"b-c"|nothing was written/);
    assert.equal(wadm.count('deploy'), 1);

    scenario.running.service.knowledge.reset();
    await mc.reconcile('tenant', 'b-c');
    assert.deepEqual(await wadm.model('ra', 'b-c'), { versions: [won], deployed: won });
    assert.equal(statusOf(mc, winner).version, won);
    assert.notEqual(reasonOf(mc, winner), 'NameCollision');
    await wadm.direct('ra', 'model.del.b-c', '{}');
  });
});

describe('the stray of another name lands before the winner deploys', () => {
  const winner: Racer = {
    resource: wasmApp().inLattice('rb').named('b-c').inNamespace('tenant').build(),
    lattice: 'rb',
    name: 'b-c',
  };
  const loser: Racer = { resource: wasmApp().inLattice('rb-b').named('c').inNamespace('tenant').build(), lattice: 'rb-b', name: 'c' };

  it("makes wadm miss the winner's key, so nothing is deployed until the winner removes the stray", async () => {
    const mc = scenario.metacontroller();
    const loserPut = wadm.hold('put', { lattice: 'rb-b' });
    const winnerPut = wadm.hold('put', { lattice: 'rb' });
    const winnerDeploy = wadm.hold('deploy', { lattice: 'rb' });
    mc.apply(loser.resource as never);
    const losing = mc.reconcile('tenant', 'c');
    await loserPut.arrived;
    mc.apply(winner.resource as never);
    const winning = mc.reconcile('tenant', 'b-c');
    await winnerPut.arrived;
    winnerPut.release();
    await winnerDeploy.arrived;
    loserPut.release();
    await losing;
    winnerDeploy.release();
    await winning;

    // wadm stores a model under its newest version's name: the deploy through "b-c" wrote key
    // rb-c with the revision of rb-b-c, and the store refused it. Nothing was deployed anywhere.
    const stray = statusOf(mc, loser).version!;
    const won = statusOf(mc, winner).version!;
    assert.deepEqual(await wadm.model('rb', 'b-c'), { versions: [won, stray], deployed: null });
    assert.equal(await wadm.model('rb', 'c'), undefined);
    assert.equal(reasonOf(mc, winner), 'LatticeUnavailable');
    assert.equal(reasonOf(mc, loser), 'NameCollision');

    await mc.reconcile('tenant', 'b-c');
    assert.deepEqual(await wadm.model('rb', 'b-c'), { versions: [won], deployed: won });
    await wadm.direct('rb', 'model.del.b-c', '{}');
  });
});
