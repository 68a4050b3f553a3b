import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applicationOf, callOf, type Application } from '../../src/core/application.js';
import { decideSync } from '../../src/core/decide.js';
import { resyncJitter } from '../../src/core/status.js';
import { defaultOnly, fromPolicy } from '../../src/core/tenancy.js';

const TENANCY = defaultOnly('default');
import { MemoryLattice } from '../support/memory-lattice.js';
import { wasmApp, hookRequest, type Resource } from '../support/resources.js';
import type { Action } from '../../src/core/facts.js';

const NOW = Date.parse('2026-11-30T12:00:00Z');

function sync(
  lattice: MemoryLattice,
  parent: Resource,
  options: Parameters<typeof hookRequest>[1] = {},
  now = NOW,
  maxPayloadBytes?: number,
) {
  return lattice.run(decideSync, callOf(hookRequest(parent, options), TENANCY, { now, maxPayloadBytes }));
}

function manifestOf(parent: Resource) {
  const { app } = applicationOf(parent, 'default');
  assert.ok(app.valid);
  return (app as Extract<Application, { valid: true }>).manifest;
}

const kinds = (actions: Action[]) => actions.map((a) => a.kind);
const deployed = { status: { type: 'deployed' as const } };

describe('sync of a new application', () => {
  it('puts the rendered manifest and deploys that version, without asking wadm a status that could only predate it', async () => {
    const lattice = new MemoryLattice();
    const run = await sync(lattice, wasmApp().build());
    // Our key read empty, so no lattice "default-hello-world" has an index there; and no model can
    // sit at "default"'s index key (no "-" in it): nothing more to ask before the put (collisions.ts).
    assert.deepEqual(kinds(run.actions), ['read-model', 'put', 'deploy']);
    const model = lattice.model('hello-world')!;
    assert.equal(model.deployed, run.response.status.version);
    assert.match(run.response.status.version!, /^sha-[0-9a-f]{16}$/);
  });

  it('in a lattice named with a "-", first reads its index key through the one model name that maps to it', async () => {
    const lattice = new MemoryLattice();
    const resource = wasmApp().build();
    const anyLattice = fromPolicy({ rules: [{ namespaces: ['*'], lattices: ['*'] }] }, 'default');
    const run = await lattice.run(
      decideSync,
      callOf(hookRequest({ ...resource, spec: { ...resource.spec, lattice: 'team-a' } }), anyLattice, { now: NOW }),
    );
    assert.deepEqual(kinds(run.actions), ['read-model', 'read-key', 'put', 'deploy']);
    assert.deepEqual(run.actions[1], { kind: 'read-key', key: { lattice: 'team', name: 'a' } });
  });

  it('does not report Ready from a status wadm published before the deploy was acknowledged', async () => {
    const lattice = new MemoryLattice();
    lattice.setStatus('hello-world', deployed);
    const run = await sync(lattice, wasmApp().build());
    const { status } = run.response;
    assert.equal(status.phase, 'Reconciling');
    assert.equal(status.conditions![0]!.status, 'False');
    assert.equal(status.conditions![0]!.reason, 'Progressing');
    assert.equal(run.response.resyncAfterSeconds, resyncJitter(2, 'default/hello-world'));
  });

  it('answers children: [] and never finalized from sync', async () => {
    const run = await sync(new MemoryLattice(), wasmApp().build());
    assert.deepEqual(run.response.children, []);
    assert.equal('finalized' in run.response, false);
  });
});

describe('sync of a deployed application', () => {
  async function settled() {
    const lattice = new MemoryLattice();
    const first = await sync(lattice, wasmApp().build());
    lattice.setStatus('hello-world', {
      status: { type: 'deployed' },
      scalers: [{ kind: 'SpreadScaler', name: 'hello_world-http_component', status: { type: 'deployed' } }],
    });
    return { lattice, first };
  }

  it('is Ready with no writes and no resync once wadm reports it deployed', async () => {
    const { lattice, first } = await settled();
    const parent = wasmApp().withStatus(first.response.status).build();
    const run = await sync(lattice, parent);
    // Its status attests the version deployed, and the model's summary agrees: no model read (core/summary.ts).
    assert.deepEqual(kinds(run.actions), ['read-summary', 'read-status']);
    assert.equal(run.response.status.phase, 'Deployed');
    assert.equal(run.response.status.deployedVersion, first.response.status.version);
    assert.deepEqual(
      run.response.status.conditions!.map((c) => [c.type, c.status, c.reason]),
      [['Ready', 'True', 'Deployed']],
    );
    assert.equal(run.response.resyncAfterSeconds, undefined);
    assert.deepEqual(run.response.status.scalers, [{ kind: 'SpreadScaler', name: 'hello_world-http_component', status: 'Deployed' }]);
  });

  it('gives byte-identical status when Metacontroller feeds the status back (no hot loop)', async () => {
    const { lattice, first } = await settled();
    const second = await sync(lattice, wasmApp().withStatus(first.response.status).build(), {}, NOW + 5_000);
    const third = await sync(lattice, wasmApp().withStatus(second.response.status).build(), {}, NOW + 60_000);
    assert.equal(JSON.stringify(third.response), JSON.stringify(second.response));
  });

  it('keeps lastTransitionTime while a condition keeps its status, and moves it on a flip', async () => {
    const { lattice, first } = await settled();
    const flipped = await sync(lattice, wasmApp().withStatus(first.response.status).build(), {}, NOW + 5_000);
    assert.equal(flipped.response.status.conditions![0]!.lastTransitionTime, '2026-11-30T12:00:05Z');
    const kept = await sync(lattice, wasmApp().withStatus(flipped.response.status).build(), {}, NOW + 9_000);
    assert.equal(kept.response.status.conditions![0]!.lastTransitionTime, '2026-11-30T12:00:05Z');
  });

  it('puts and deploys a new version when the spec changes, and redeploys the earlier one on revert without a put', async () => {
    const { lattice, first } = await settled();
    const edited = wasmApp().described('changed').build();
    const edit = await sync(lattice, edited);
    assert.deepEqual(kinds(edit.actions), ['read-model', 'put', 'deploy']);
    assert.notEqual(edit.response.status.version, first.response.status.version);

    const revert = await sync(lattice, wasmApp().build());
    // The oldest version is read: its owner annotation says whose the model is (ownership.ts).
    assert.deepEqual(kinds(revert.actions), ['read-model', 'read-version', 'deploy']);
    assert.equal(lattice.model('hello-world')!.deployed, first.response.status.version);
    assert.equal(lattice.model('hello-world')!.versions.size, 2);
  });

  it('ignores changes to fields that are not part of the manifest (suspend aside)', async () => {
    const { lattice, first } = await settled();
    const run = await sync(lattice, wasmApp().with({ deletionPolicy: 'Orphan', revisionHistoryLimit: 3 }).build());
    assert.equal(run.response.status.version, first.response.status.version);
    assert.deepEqual(kinds(run.actions), ['read-model', 'read-status']);
  });

  it('undeploys on suspend and deploys again on resume', async () => {
    const { lattice } = await settled();
    const suspended = await sync(lattice, wasmApp().suspended().build());
    assert.deepEqual(kinds(suspended.actions), ['read-model', 'undeploy']);
    assert.equal(suspended.response.status.phase, 'Suspended');
    assert.equal(lattice.model('hello-world')!.deployed, null);
    const resumed = await sync(lattice, wasmApp().build());
    assert.deepEqual(kinds(resumed.actions), ['read-model', 'deploy']);
  });
});

describe('revision history', () => {
  it('deletes the oldest versions that are neither deployed nor desired beyond revisionHistoryLimit', async () => {
    const lattice = new MemoryLattice();
    const versions: string[] = [];
    for (const description of ['a', 'b', 'c', 'd']) {
      const run = await sync(lattice, wasmApp().with({ description, revisionHistoryLimit: 2 }).build());
      versions.push(run.response.status.version!);
    }
    assert.deepEqual([...lattice.model('hello-world')!.versions.keys()], versions.slice(2));
  });

  it('never deletes the deployed version even when over the limit', async () => {
    const lattice = new MemoryLattice();
    const first = await sync(lattice, wasmApp().with({ description: 'a', revisionHistoryLimit: 1 }).build());
    const second = await sync(lattice, wasmApp().with({ description: 'b', revisionHistoryLimit: 1 }).build());
    assert.deepEqual([...lattice.model('hello-world')!.versions.keys()], [second.response.status.version]);
    assert.notEqual(first.response.status.version, second.response.status.version);
  });
});

describe('versions', () => {
  it('gives the same version for the same spec whatever the key order', async () => {
    const a = manifestOf(
      wasmApp
        .scratch()
        .named('app')
        .with({ components: [{ name: 'c', type: 'component', properties: { image: 'i' } }], description: 'd' })
        .build(),
    );
    const b = manifestOf(
      wasmApp
        .scratch()
        .named('app')
        .with({ description: 'd', components: [{ properties: { image: 'i' }, type: 'component', name: 'c' }] })
        .build(),
    );
    assert.equal(a.version, b.version);
  });

  it('uses a pinned spec.version and refuses to reuse it for other content', async () => {
    const lattice = new MemoryLattice();
    const first = await sync(lattice, wasmApp().pinned('v1').build());
    assert.equal(first.response.status.version, 'v1');
    const changed = await sync(lattice, wasmApp().pinned('v1').described('new').build());
    assert.equal(changed.response.status.phase, 'Failed');
    const stalled = changed.response.status.conditions!.find((c) => c.type === 'Stalled')!;
    assert.equal(stalled.reason, 'VersionConflict');
    assert.match(stalled.message, /change spec\.version/);
    assert.deepEqual(kinds(changed.actions), ['read-model']);
  });

  it('reads an older pinned version to compare its content before redeploying it', async () => {
    const lattice = new MemoryLattice();
    await sync(lattice, wasmApp().pinned('v1').build());
    await sync(lattice, wasmApp().pinned('v2').described('two').build());
    const back = await sync(lattice, wasmApp().pinned('v1').build());
    assert.deepEqual(kinds(back.actions), ['read-model', 'read-version', 'deploy']);
  });

  it('takes the version annotation of a converted wadm manifest as a pin', async () => {
    const run = await sync(new MemoryLattice(), wasmApp('secrets-policy.yaml').build());
    assert.equal(run.response.status.version, 'v0.0.1');
  });
});

describe('ownership', () => {
  it('never writes to a model owned by another resource', async () => {
    const lattice = new MemoryLattice();
    lattice.seed('hello-world', [['v1', { owner: 'team-a/hello-world', contentHash: null }]], 'v1');
    const run = await sync(lattice, wasmApp().inNamespace('team-b').build());
    assert.deepEqual(kinds(run.actions), ['read-model']);
    const stalled = run.response.status.conditions!.find((c) => c.type === 'Stalled')!;
    assert.equal(stalled.reason, 'OwnershipConflict');
    // Another namespace's resource is never named: tenants must not learn each other's names.
    assert.match(stalled.message, /belongs to a resource in another namespace/);
    assert.doesNotMatch(JSON.stringify(run.response), /team-a/);
  });

  it('never writes to a model created outside Kubernetes unless told to adopt it', async () => {
    const lattice = new MemoryLattice();
    lattice.seed('hello-world', [['01J0', { owner: null, contentHash: null }]], '01J0');
    const refused = await sync(lattice, wasmApp().build());
    assert.deepEqual(kinds(refused.actions), ['read-model']);
    assert.match(refused.response.status.message!, /core\.wasmcloud\.com\/adopt/);

    const adopting = wasmApp().annotated({ 'core.wasmcloud.com/adopt': 'true' }).build();
    const adopted = await sync(lattice, adopting);
    assert.deepEqual(kinds(adopted.actions), ['read-model', 'put', 'deploy']);
  });

  it('takes over what wash deployed as adoption, not as drift: the deploy names the version it adopts', async () => {
    const lattice = new MemoryLattice();
    lattice.seed('hello-world', [['v1.0.0', { owner: null, contentHash: null }]], 'v1.0.0');
    const adopted = await sync(lattice, wasmApp().annotated({ 'core.wasmcloud.com/adopt': 'true' }).build());
    const deploy = adopted.actions.find((a) => a.kind === 'deploy')!;
    assert.deepEqual(deploy, { kind: 'deploy', version: adopted.response.status.version, adopting: 'v1.0.0' });
    assert.doesNotMatch(adopted.response.status.message!, /outside Kubernetes/, 'no drift is reported');
    assert.equal(adopted.response.status.deployedVersion, adopted.response.status.version);
  });

  it('calls an unowned version deployed over an adopted application drift', async () => {
    const lattice = new MemoryLattice();
    const resource = wasmApp().annotated({ 'core.wasmcloud.com/adopt': 'true' }).build();
    const ours = manifestOf(resource);
    lattice.seed(
      'hello-world',
      [
        [ours.version, { owner: 'default/hello-world', contentHash: ours.contentHash }],
        ['v2.0.0', { owner: null, contentHash: null }],
      ],
      'v2.0.0',
    );
    const healed = await sync(lattice, resource, { status: { deployedVersion: ours.version } });
    const deploy = healed.actions.find((a) => a.kind === 'deploy')!;
    assert.deepEqual(deploy, { kind: 'deploy', version: ours.version, replacing: { deployed: 'v2.0.0' } });
  });

  it('tells an adopting resource pinned to the version wash put to unpin it, rather than to bump it', async () => {
    const lattice = new MemoryLattice();
    lattice.seed('hello-world', [['v1.0.0', { owner: null, contentHash: null }]], 'v1.0.0');
    const run = await sync(lattice, wasmApp().pinned('v1.0.0').annotated({ 'core.wasmcloud.com/adopt': 'true' }).build());
    assert.deepEqual(kinds(run.actions), ['read-model'], 'nothing is written');
    const stalled = run.response.status.conditions!.find((c) => c.type === 'Stalled')!;
    assert.equal(stalled.reason, 'VersionConflict');
    assert.match(stalled.message, /was put outside Kubernetes.*remove the pinned version.*convert --adopt/);
  });
});

describe('wadm trouble', () => {
  it('reports Ready=Unknown with LatticeUnavailable and keeps the last known fields', async () => {
    const lattice = new MemoryLattice();
    lattice.down = true;
    const previous = {
      deployedVersion: 'sha-0000000000000001',
      scalers: [{ kind: 'SpreadScaler', name: 'x', status: 'Deployed', extra: 'dropped' }],
    };
    const run = await sync(lattice, wasmApp().build(), { status: previous });
    const { status } = run.response;
    assert.equal(status.phase, 'Unknown');
    assert.deepEqual(
      status.conditions!.map((c) => [c.type, c.status, c.reason]),
      [
        ['Ready', 'Unknown', 'LatticeUnavailable'],
        ['Reconciling', 'True', 'LatticeUnavailable'],
      ],
    );
    assert.equal(status.deployedVersion, 'sha-0000000000000001');
    assert.deepEqual(status.scalers, [{ kind: 'SpreadScaler', name: 'x', status: 'Deployed' }]);
    assert.equal(run.response.resyncAfterSeconds, resyncJitter(5, 'default/hello-world'));
  });

  it('reports a subject NATS refuses as Stalled LatticeNotPermitted, naming it, at the stalled pace', async () => {
    const lattice = new MemoryLattice();
    const refused =
      'NATS refused this service\'s user to publish to "wadm.api.default.model.versions.hello-world" (permissions violation); grant it publish on "wadm.api.default.>" (see SECURITY.md)';
    lattice.scripted.push({ kind: 'read-model', result: { kind: 'unavailable', reason: 'NotPermitted', message: refused } });
    const run = await sync(lattice, wasmApp().build(), { status: { deployedVersion: 'sha-0000000000000001' } });
    const { status } = run.response;
    assert.deepEqual(
      status.conditions!.map((c) => [c.type, c.status, c.reason]),
      [
        ['Ready', 'False', 'LatticeNotPermitted'],
        ['Stalled', 'True', 'LatticeNotPermitted'],
      ],
    );
    assert.equal(status.message, `Cannot use lattice "default": ${refused}; will retry`);
    assert.equal(status.deployedVersion, 'sha-0000000000000001', 'what was last known, not more');
    assert.equal(run.response.resyncAfterSeconds, resyncJitter(60, 'default/hello-world'));
  });

  it("reports a manifest wadm rejects as ManifestInvalid with wadm's message", async () => {
    const lattice = new MemoryLattice();
    lattice.scripted.push({ kind: 'put', result: { kind: 'rejected', message: 'Unable to parse manifest: boom' } });
    const run = await sync(lattice, wasmApp().build());
    assert.equal(run.response.status.phase, 'Invalid');
    assert.equal(run.response.status.conditions!.find((c) => c.type === 'Stalled')!.reason, 'ManifestInvalid');
    assert.match(run.response.status.message!, /Unable to parse manifest: boom/);
  });

  it('re-reads the model when a put finds the version already there (another replica won)', async () => {
    const lattice = new MemoryLattice();
    const { version, contentHash } = manifestOf(wasmApp().build());
    lattice.scripted.push({ kind: 'read-model', result: { kind: 'model', model: null } });
    lattice.seed('hello-world', [[version, { owner: 'default/hello-world', contentHash }]]);
    const run = await sync(lattice, wasmApp().build());
    assert.deepEqual(kinds(run.actions), ['read-model', 'put', 'read-model', 'deploy']);
  });

  it('gives up as LatticeUnavailable when wadm keeps contradicting itself', async () => {
    const lattice = new MemoryLattice();
    for (let i = 0; i < 100; i++) lattice.scripted.push({ kind: 'put', result: { kind: 'stale' } });
    const run = await sync(lattice, wasmApp().build());
    assert.equal(run.response.status.phase, 'Unknown');
    assert.match(run.response.status.message!, /inconsistent/);
  });
});
