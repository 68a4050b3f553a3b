// The one builder of WasmCloudApplication variants: `app().named('a').inLattice('l').suspended().pinned('v1').build()`.
// Each step returns a new builder, so a shared base can be branched without copies leaking between tests.
import { hello, type Resource } from './resources.js';

export class AppBuilder {
  constructor(private readonly resource: Resource) {}

  named(name: string): AppBuilder {
    return new AppBuilder({ ...this.resource, metadata: { ...this.resource.metadata, name } });
  }

  labelled(labels: Record<string, string>): AppBuilder {
    return new AppBuilder({ ...this.resource, metadata: { ...this.resource.metadata, labels } });
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

  build(): Resource {
    return structuredClone(this.resource);
  }
}

/** hello.yaml (or `base`) as the starting point of a variant. */
export function app(base: Resource = hello()): AppBuilder {
  return new AppBuilder(base);
}
