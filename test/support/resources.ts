// The one builder of WasmCloudApplication resources, and the hook request Metacontroller sends for one.
//   wasmApp()                          hello.yaml (test/fixtures/wadm/) as a resource in namespace `default`
//   wasmApp('complex.yaml')            another wadm fixture; only apiVersion and kind change
//   wasmApp.scratch()                  nothing but name `app` and namespace `default`: give it a spec with .with()
// then e.g. `.named('a').inNamespace('team-a').inLattice('l').suspended().pinned('v1').build()`.
// Each step returns a new builder, so a shared base can be branched without copies leaking between tests.
import yaml from 'js-yaml';
import { convertManifest } from '../../src/convert/oam.js';
import type { HookRequest } from '../../src/schema/hook.js';
import { fixtureText } from './fixtures.js';

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
  /** Whatever else a test puts on it (a Kubernetes object may carry more). */
  [field: string]: unknown;
}

export class AppBuilder {
  constructor(private readonly resource: Resource) {}

  private withMetadata(metadata: Partial<Resource['metadata']>): AppBuilder {
    return new AppBuilder({ ...this.resource, metadata: { ...this.resource.metadata, ...metadata } });
  }

  named(name: string): AppBuilder {
    return this.withMetadata({ name });
  }

  inNamespace(namespace: string): AppBuilder {
    return this.withMetadata({ namespace });
  }

  /** Labels added (or changed). */
  labelled(labels: Record<string, string>): AppBuilder {
    return this.withMetadata({ labels: { ...this.resource.metadata.labels, ...labels } });
  }

  /** Annotations added (or changed) beside the fixture's; `.unannotated().annotated(…)` for these alone. */
  annotated(annotations: Record<string, string>): AppBuilder {
    return this.withMetadata({ annotations: { ...this.resource.metadata.annotations, ...annotations } });
  }

  /** No annotations at all, not even the fixture's (its `description`, its `version`). */
  unannotated(): AppBuilder {
    const { annotations: _dropped, ...metadata } = this.resource.metadata;
    return new AppBuilder({ ...this.resource, metadata });
  }

  /** Spec fields replaced (shallow), as a user editing the resource would. */
  with(spec: Record<string, unknown>): AppBuilder {
    return new AppBuilder({ ...this.resource, spec: { ...this.resource.spec, ...spec } });
  }

  inLattice(lattice: string): AppBuilder {
    return this.with({ lattice });
  }

  suspended(suspend = true): AppBuilder {
    return this.with({ suspend });
  }

  pinned(version: string): AppBuilder {
    return this.with({ version });
  }

  described(description: string): AppBuilder {
    return this.with({ description });
  }

  /**
   * The first component's config replaced by one blob of about `bytes` bytes that starts with `edit`:
   * the kind of manifest that fills wadm's stored value (each edit a new version).
   */
  withLargeConfig(edit: number, bytes = 110_000): AppBuilder {
    const components = structuredClone(this.resource.spec['components']) as { properties: Record<string, unknown> }[];
    components[0]!.properties['config'] = [{ name: 'blob', properties: { data: `${edit}-`.padEnd(bytes, 'x') } }];
    return this.with({ components });
  }

  /** The status the resource carries, as Metacontroller sends it back on the next call. */
  withStatus(status: unknown): AppBuilder {
    return new AppBuilder({ ...this.resource, status });
  }

  build(): Resource {
    return structuredClone(this.resource);
  }
}

/** A wadm fixture (hello.yaml unless named) turned into a WasmCloudApplication in namespace `default`. */
export function wasmApp(fixture = 'hello.yaml'): AppBuilder {
  return new AppBuilder(convertManifest(yaml.load(fixtureText(fixture)) as object, 'default') as unknown as Resource);
}

/** A resource with no spec yet, for specs written out in full. */
wasmApp.scratch = (): AppBuilder =>
  new AppBuilder({
    apiVersion: 'core.wasmcloud.com/v1beta1',
    kind: 'WasmCloudApplication',
    metadata: { name: 'app', namespace: 'default' },
    spec: {},
  });

export function hookRequest(parent: Resource, options: { generation?: number; status?: unknown; finalizing?: boolean } = {}): HookRequest {
  const metadata = { uid: `uid-${parent.metadata.namespace}-${parent.metadata.name}`, generation: 1, ...parent.metadata };
  if (options.generation !== undefined) metadata.generation = options.generation;
  const withStatus =
    options.status !== undefined ? { status: options.status } : parent.status !== undefined ? { status: parent.status } : {};
  return {
    controller: {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'CompositeController',
      metadata: { name: 'wasmcloudapplication-controller' },
    },
    parent: { ...parent, metadata, ...withStatus },
    children: {},
    related: {},
    finalizing: options.finalizing ?? false,
  } as HookRequest;
}
