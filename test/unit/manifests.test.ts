import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import yaml from 'js-yaml';
import { GROUP, PLURAL, VERSION } from '../../src/schema/crd.js';
import { HOOK_PATHS, LATTICE_HOOK_PATH } from '../../src/server.js';
import { LATTICE_PLURAL } from '../../src/schema/lattice-crd.js';

interface Webhook {
  service: { name: string; port: number };
  path: string;
  timeout: string;
}
const controller = yaml.load(readFileSync(resolve(import.meta.dirname, '../../manifests/compositecontroller.yaml'), 'utf8')) as {
  spec: {
    parentResource: { apiVersion: string; resource: string };
    hooks: Record<string, { webhook: Webhook }>;
    resyncPeriodSeconds: number;
  };
};

describe('the CompositeController', () => {
  it('watches our CRD', () => {
    assert.deepEqual(controller.spec.parentResource, { apiVersion: `${GROUP}/${VERSION}`, resource: PLURAL });
  });

  it("calls the paths the server registers, within Metacontroller's 10 s", () => {
    for (const [hook, path] of Object.entries(HOOK_PATHS)) {
      const webhook = controller.spec.hooks[hook]!.webhook;
      assert.equal(webhook.path, path);
      assert.equal(webhook.service.name, 'wasmcloud-metacontroller');
      assert.equal(webhook.timeout, '10s');
    }
  });

  it("turns on the sync hook's ETag cache with both cache settings (one alone crashes Metacontroller)", () => {
    const etag = (controller.spec.hooks['sync']!.webhook as unknown as { etag: Record<string, unknown> }).etag;
    assert.equal(etag['enabled'], true);
    assert.ok(Number(etag['cacheTimeoutSeconds']) > 0 && Number(etag['cacheCleanupSeconds']) > 0);
  });

  it('resyncs so that changes made outside Kubernetes are noticed', () => {
    assert.ok(controller.spec.resyncPeriodSeconds > 0 && controller.spec.resyncPeriodSeconds <= 300);
  });
});

describe("the WasmCloudLattices' CompositeController", () => {
  const lattices = yaml.load(
    readFileSync(resolve(import.meta.dirname, '../../manifests/lattice-controller.yaml'), 'utf8'),
  ) as typeof controller;

  it('watches the lattice CRD and calls the path the server registers for it, on the same Service, within 10 s', () => {
    assert.deepEqual(lattices.spec.parentResource, { apiVersion: `${GROUP}/${VERSION}`, resource: LATTICE_PLURAL });
    assert.deepEqual(Object.keys(lattices.spec.hooks), ['sync']);
    const webhook = lattices.spec.hooks['sync']!.webhook;
    assert.equal(webhook.path, LATTICE_HOOK_PATH);
    assert.deepEqual(webhook.service, controller.spec.hooks['sync']!.webhook.service);
    assert.equal(webhook.timeout, '10s');
  });

  it('resyncs at least every heartbeat period, so that a quiet lattice still shows new hosts and applications', () => {
    assert.ok(lattices.spec.resyncPeriodSeconds > 0 && lattices.spec.resyncPeriodSeconds <= 30);
  });
});
