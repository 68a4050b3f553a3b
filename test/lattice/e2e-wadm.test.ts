// End to end against the REAL wadm 0.21.1 (test/wadm) on a real nats-server 2.11 with
// JetStream, driven through our service by the Metacontroller emulator. No wasmCloud hosts here:
// test/lattice/e2e-hosts.test.ts adds simulated hosts.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, headers, type NatsConnection } from 'nats';
import yaml from 'js-yaml';
import { metacontrollerFor, condition, type FakeMetacontroller, type K8sObject } from '../support/metacontroller.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { wasmApp, type Resource } from '../support/resources.js';
import { fixtureText } from '../support/fixtures.js';
import { CleanupStack, startService, type RunningService } from '../support/service.js';
import { startWadm, type WadmProcess } from '../support/wadm.js';

let nats: NatsServer;
let wadm: WadmProcess;
let nc: NatsConnection;
let running: RunningService;
const cleanups = new CleanupStack();

before(async () => {
  nats = await startNatsServer();
  wadm = await startWadm(nats.url);
  nc = await connect({ servers: nats.url });
  running = await startService(cleanups, { NATS_URL: nats.url }, { deployGraceMs: 300 });
  await running.connected();
});
after(async () => {
  await cleanups.run();
  await nc.close();
  await wadm.stop();
  await nats.dispose();
});

/** Asks the real wadm directly, as `wash app` would. */
async function ask(lattice: string, op: string, name?: string, body = ''): Promise<Record<string, unknown>> {
  const subject = `wadm.api.${lattice}.model.${op}${name ? `.${name}` : ''}`;
  const msg = await nc.request(subject, body, { timeout: 3000 });
  return JSON.parse(msg.string()) as Record<string, unknown>;
}

async function versions(lattice: string, name: string) {
  return (await ask(lattice, 'versions', name))['versions'] as { version: string; deployed: boolean }[];
}

const statusOf = (obj: K8sObject | undefined) => obj?.status as { phase?: string; version?: string; deployedVersion?: string } | undefined;

async function sync(mc: FakeMetacontroller, resource: Resource): Promise<K8sObject> {
  mc.apply(resource as never);
  const { namespace, name } = resource.metadata;
  await mc.reconcile(namespace, name);
  await mc.reconcile(namespace, name); // the status write's watch event
  return mc.get(namespace, name)!;
}

describe('the real wadm, without hosts', () => {
  it('accepts every valid fixture converted to a WasmCloudApplication', async () => {
    const mc = metacontrollerFor(running.url);
    // shared-http must be deployed before an application that uses its components can deploy.
    for (const file of [
      'hello.yaml',
      'complex.yaml',
      'daemonscaler.yaml',
      'secrets-policy.yaml',
      'shared-http.yaml',
      'shared-http-dev.yaml',
    ]) {
      const resource = wasmApp(file).inLattice('fixtures').build();
      const obj = await sync(mc, resource);
      const status = statusOf(obj)!;
      assert.equal(condition(obj, 'Stalled'), undefined, `${file}: ${JSON.stringify(obj.status)}`);
      assert.equal(status.deployedVersion, status.version, file);
      assert.deepEqual(await versions('fixtures', resource.metadata.name), [{ version: status.version, deployed: true }], file);
    }
  });

  it("reports wadm's refusal to deploy an application whose shared components are not deployed", async () => {
    const mc = metacontrollerFor(running.url);
    const obj = await sync(mc, wasmApp('shared-http-dev.yaml').inLattice('unshared').build());
    const stalled = condition(obj, 'Stalled')!;
    assert.equal(stalled.reason, 'DeployFailed');
    assert.match(stalled.message ?? '', /Application contains shared components that are not deployed in other applications/);
    assert.equal((await versions('unshared', 'shared-http-dev')).length, 1, 'the put went through, the deploy did not');
  });

  it('rejects the invalid fixtures before wadm, naming the field; wadm itself gives its own message for them', async () => {
    const mc = metacontrollerFor(running.url);
    const expectations: [string, string, RegExp, string][] = [
      [
        'invalid-dangling-link.yaml',
        'dangling-link',
        /traits\[1\]\.properties\.target: link target "httpclient"/,
        'The following capability component(s) are missing from the manifest: ["httpclient"]',
      ],
      [
        'invalid-made-up-key.yaml',
        'sample',
        /traits\[0\]\.incorrect: is not a known field/,
        'Unable to parse manifest: YAML parsing failed: Error("spec.components[0].traits[0]: unknown field `incorrect`',
      ],
    ];
    for (const [file, name, ours, theirs] of expectations) {
      const obj = await sync(mc, wasmApp(file).inNamespace('invalid').inLattice('invalid').build());
      assert.equal(condition(obj, 'Stalled')!.reason, 'InvalidSpec', file);
      assert.match(condition(obj, 'Stalled')!.message ?? '', ours, file);
      assert.equal((await ask('invalid', 'get', name))['result'], 'notfound', `${file} never reached wadm`);
      // The same manifest sent to wadm as is (raw YAML, no Content-Type) gets wadm's message.
      const reply = await ask('invalid', 'put', undefined, fixtureText(file));
      assert.equal(reply['result'], 'error');
      assert.ok(String(reply['message']).startsWith(theirs), `${file}: ${String(reply['message'])}`);
    }
  });

  it('makes no new version on a re-sync, puts and deploys on an edit, and redeploys the earlier version on revert', async () => {
    const mc = metacontrollerFor(running.url);
    const lattice = 'versions';
    const first = statusOf(await sync(mc, wasmApp().inLattice(lattice).build()))!.version!;
    for (let i = 0; i < 3; i++) await mc.reconcile('default', 'hello-world');
    assert.deepEqual(await versions(lattice, 'hello-world'), [{ version: first, deployed: true }]);

    const second = statusOf(await sync(mc, wasmApp().described('edited').inLattice(lattice).build()))!.version!;
    assert.notEqual(second, first);
    assert.deepEqual(await versions(lattice, 'hello-world'), [
      { version: first, deployed: false },
      { version: second, deployed: true },
    ]);

    const reverted = statusOf(await sync(mc, wasmApp().inLattice(lattice).build()))!;
    assert.equal(reverted.version, first);
    assert.equal(reverted.deployedVersion, first);
    assert.deepEqual(await versions(lattice, 'hello-world'), [
      { version: first, deployed: true },
      { version: second, deployed: false },
    ]);
  });

  it('keeps at most revisionHistoryLimit versions in wadm', async () => {
    const mc = metacontrollerFor(running.url);
    let last = '';
    for (const description of ['a', 'b', 'c', 'd']) {
      last = statusOf(await sync(mc, wasmApp().with({ description, revisionHistoryLimit: 2 }).inLattice('history').build()))!.version!;
    }
    const kept = await versions('history', 'hello-world');
    assert.equal(kept.length, 2);
    assert.deepEqual(kept[1], { version: last, deployed: true });
  });

  it('refuses to reuse a pinned version for other content', async () => {
    const mc = metacontrollerFor(running.url);
    await sync(mc, wasmApp().pinned('v1.0.0').inLattice('pinned').build());
    const obj = await sync(mc, wasmApp().pinned('v1.0.0').described('changed').inLattice('pinned').build());
    assert.equal(condition(obj, 'Stalled')!.reason, 'VersionConflict');
    assert.deepEqual(await versions('pinned', 'hello-world'), [{ version: 'v1.0.0', deployed: true }]);
  });

  it('undeploys on suspend and keeps the versions', async () => {
    const mc = metacontrollerFor(running.url);
    await sync(mc, wasmApp().inLattice('suspend').build());
    const obj = await sync(mc, wasmApp().suspended().inLattice('suspend').build());
    assert.equal(statusOf(obj)!.phase, 'Suspended');
    const all = await versions('suspend', 'hello-world');
    assert.equal(all.length, 1);
    assert.equal(all[0]!.deployed, false);
  });

  it('deletes the model on delete, so that model.get no longer finds it', async () => {
    const mc = metacontrollerFor(running.url);
    await sync(mc, wasmApp().inLattice('delete').build());
    const result = await mc.deleteAndFinalize('default', 'hello-world', { maxPasses: 5 });
    assert.equal(result.removed, true);
    assert.equal((await ask('delete', 'get', 'hello-world'))['result'], 'notfound');
  });

  it('takes over an application deployed with wash only when asked to adopt it', async () => {
    const h = headers();
    h.set('Content-Type', 'application/yaml');
    const put = await nc.request('wadm.api.adopt.model.put', fixtureText('hello.yaml'), { timeout: 3000, headers: h });
    assert.equal((JSON.parse(put.string()) as { result: string }).result, 'created');
    const mc = metacontrollerFor(running.url);
    const refused = await sync(mc, wasmApp().inLattice('adopt').build());
    assert.equal(condition(refused, 'Stalled')!.reason, 'OwnershipConflict');
    assert.equal((await versions('adopt', 'hello-world')).length, 1);

    const adopting = wasmApp().inLattice('adopt').annotated({ 'core.wasmcloud.com/adopt': 'true' }).build();
    const adopted = await sync(mc, adopting);
    assert.equal(condition(adopted, 'Stalled'), undefined);
    assert.equal((await versions('adopt', 'hello-world')).at(-1)!.deployed, true);
  });

  it('reports what real wadm says without hosts: no status message at all, so Undeployed and still reconciling', async () => {
    const mc = metacontrollerFor(running.url);
    const published: string[] = [];
    const sub = nc.subscribe('wadm.status.nohosts.*', { callback: (_err, msg) => published.push(msg.string()) });
    try {
      const obj = await sync(mc, wasmApp().inLattice('nohosts').build());
      assert.equal(statusOf(obj)!.phase, 'Reconciling', 'right after the deploy, wadm has said nothing about the new version');
      await new Promise((resolve) => setTimeout(resolve, 400)); // past the deploy grace period
      await mc.reconcile('default', 'hello-world');
      const later = mc.get('default', 'hello-world')!;
      assert.equal(statusOf(later)!.phase, 'Undeployed');
      assert.equal(condition(later, 'Ready')!.status, 'False');
      assert.equal(condition(later, 'Reconciling')!.reason, 'Progressing');
      // What wadm itself says: model.status is ok+undeployed, the list says waiting, and the stream is silent.
      const status = await ask('nohosts', 'status', 'hello-world');
      assert.deepEqual((status['status'] as { status: unknown }).status, { type: 'undeployed' });
      const list = (await ask('nohosts', 'get'))['models'] as { detailed_status: { status: { type: string; message: string } } }[];
      assert.deepEqual(list[0]!.detailed_status.status, {
        type: 'waiting',
        message: 'Waiting for status: Lattice contains no hosts, deployment not started.',
      });
      assert.deepEqual(published, []);
    } finally {
      sub.unsubscribe();
    }
  });

  it('sends each manifest as JSON that real wadm stores with our bookkeeping annotations', async () => {
    const mc = metacontrollerFor(running.url);
    const obj = await sync(mc, wasmApp('complex.yaml').inLattice('stored').build());
    const reply = await ask('stored', 'get', 'complex');
    const manifest = reply['manifest'] as { metadata: { annotations: Record<string, string> }; spec: unknown };
    assert.equal(manifest.metadata.annotations['core.wasmcloud.com/owner'], 'default/complex');
    assert.equal(manifest.metadata.annotations['version'], statusOf(obj)!.version);
    const original = yaml.load(fixtureText('complex.yaml')) as { spec: { components: { name: string }[] } };
    assert.deepEqual(
      (manifest.spec as typeof original.spec).components.map((c) => c.name),
      original.spec.components.map((c) => c.name),
    );
  });
});

describe('changes made outside Kubernetes', () => {
  it("are seen at the next sync, without waiting for the model cache to expire, thanks to wadm's events", async () => {
    const mc = metacontrollerFor(running.url);
    const first = await sync(mc, wasmApp().inLattice('outside').build());
    const version = statusOf(first)!.version!;
    const undeploy = await ask('outside', 'undeploy', 'hello-world', '{}');
    assert.equal(undeploy['result'], 'acknowledged');
    await new Promise((resolve) => setTimeout(resolve, 200)); // wadm.evt.outside.manifest_unpublished arrives
    await mc.reconcile('default', 'hello-world');
    assert.deepEqual(await versions('outside', 'hello-world'), [{ version, deployed: true }], 'deployed again');
  });
});

describe('two replicas of the service syncing the same resource at once', () => {
  it('put exactly one version and both converge', async () => {
    const other = await startService(cleanups, { NATS_URL: nats.url }, { deployGraceMs: 300 });
    await other.connected();
    const resource = wasmApp().inLattice('replicas').build();
    const mcs = [metacontrollerFor(running.url), metacontrollerFor(other.url)];
    for (const mc of mcs) mc.apply(resource as never);
    const results = await Promise.all(mcs.map((mc) => mc.reconcile('default', 'hello-world')));
    assert.deepEqual(
      results.map((r) => r.httpStatus),
      [200, 200],
    );
    for (const mc of mcs) await mc.reconcile('default', 'hello-world');
    const all = await versions('replicas', 'hello-world');
    assert.equal(all.length, 1);
    assert.equal(all[0]!.deployed, true);
    for (const mc of mcs) {
      const status = statusOf(mc.get('default', 'hello-world'))!;
      assert.equal(status.deployedVersion, all[0]!.version);
      assert.equal(condition(mc.get('default', 'hello-world')!, 'Stalled'), undefined);
    }
  });
});
