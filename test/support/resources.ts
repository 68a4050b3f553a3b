// Builders for WasmCloudApplication resources and hook requests shaped like Metacontroller's.
import yaml from 'js-yaml';
import { convertManifest } from '../../src/convert/oam.js';
import type { HookRequest } from '../../src/schema/hook.js';

import { readFixture } from './fixtures.js';

export function fixtureText(file: string): string {
  return readFixture(file).toString('utf8');
}

/** A fixture manifest turned into a WasmCloudApplication: only apiVersion and kind change. */
export function fixtureResource(file: string, namespace = 'default'): Resource {
  return convertManifest(yaml.load(fixtureText(file)) as object, namespace) as unknown as Resource;
}

export interface Resource {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    uid?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
  };
  spec: Record<string, unknown>;
  status?: unknown;
}

export function resource(name: string, spec: Record<string, unknown>, namespace = 'default'): Resource {
  return { apiVersion: 'core.wasmcloud.com/v1beta1', kind: 'WasmCloudApplication', metadata: { name, namespace }, spec };
}

/** hello.yaml as a resource, with spec fields overridden. */
export function hello(specOverrides: Record<string, unknown> = {}, namespace = 'default'): Resource {
  const base = fixtureResource('hello.yaml', namespace);
  return { ...base, spec: { ...base.spec, ...specOverrides } };
}

/** hello-world with a config of about `bytes` bytes: the kind of manifest that fills wadm's stored value. */
export function large(edit: number, bytes = 110_000): Resource {
  const base = hello();
  const components = structuredClone(base.spec['components']) as { properties: Record<string, unknown> }[];
  components[0]!.properties['config'] = [{ name: 'blob', properties: { data: `${edit}-`.padEnd(bytes, 'x') } }];
  return { ...base, spec: { ...base.spec, components } };
}

export function hookRequest(parent: Resource, options: { generation?: number; status?: unknown; finalizing?: boolean } = {}): HookRequest {
  const metadata = { uid: `uid-${parent.metadata.namespace}-${parent.metadata.name}`, generation: 1, ...parent.metadata };
  if (options.generation !== undefined) metadata.generation = options.generation;
  const withStatus = options.status !== undefined ? { status: options.status } : parent.status !== undefined ? { status: parent.status } : {};
  return {
    controller: { apiVersion: 'metacontroller.k8s.io/v1alpha1', kind: 'CompositeController', metadata: { name: 'wasmcloudapplication-controller' } },
    parent: { ...parent, metadata, ...withStatus },
    children: {},
    related: {},
    finalizing: options.finalizing ?? false,
  } as HookRequest;
}
