// Valid WasmCloudApplications of every shape `convert --to v2` meets, for fast-check: the property
// test checks each conversion against our v2 schemas, test/kube/v2-crd.test.ts a sample of them
// against a real API server.
import fc from 'fast-check';

const NAMES = ['api', 'worker', 'Web_UI', 'kv', 'http', 'msg', 'blobs', 'billing'];
const PACKAGES = [
  ['wasi', 'http'],
  ['wasi', 'keyvalue'],
  ['wasi', 'blobstore'],
  ['wasmcloud', 'messaging'],
  ['wasi', 'logging'],
  ['acme', 'billing'],
];
const INTERFACES = ['incoming-handler', 'outgoing-handler', 'store', 'atomics', 'handler', 'consumer', 'blobstore'];
const IMAGES = [
  'ghcr.io/acme/app:1.0.0',
  'localhost:5000/app:dev',
  'oci://ghcr.io/acme/x:2',
  'file:///tmp/app.wasm',
  'wasmcloud+builtin://http-server',
];

// `hostgroup` is the one label a stock v2 host carries: a requirement on it alone places as is.
const requirements = fc.dictionary(fc.constantFrom('region', 'zone', 'hostgroup'), fc.constantFrom('east', 'west', 'moon'), {
  maxKeys: 2,
});
const spread = fc.record({
  name: fc.constantFrom('east', 'West_1', 'the-moon', '_'),
  requirements,
  weight: fc.option(fc.nat(100), { nil: undefined }),
});
const scaler = fc.record({
  type: fc.constantFrom('spreadscaler', 'daemonscaler'),
  properties: fc.record(
    { instances: fc.nat(50), spread: fc.option(fc.array(spread, { maxLength: 3 }), { nil: undefined }) },
    { requiredKeys: ['instances'] },
  ),
});
const config = fc.record({
  name: fc.constantFrom('defaults', 'Shared_Config', 'x'),
  properties: fc.option(fc.dictionary(fc.constantFrom('a', 'b', 'subscriptions', 'address', 'bucket'), fc.string({ maxLength: 8 })), {
    nil: undefined,
  }),
});
// Any package with any interfaces, and one in five each a component's outbound HTTP (wasi:http
// outgoing-handler, which the converter maps to allowedHosts: at random that pairing came up in
// 1 conversion of 300) and a blobstore link.
const anyImport = fc.record({
  pkg: fc.constantFrom(...PACKAGES),
  interfaces: fc.uniqueArray(fc.constantFrom(...INTERFACES), { minLength: 1, maxLength: 2 }),
});
const outboundHttp = fc.constant<{ pkg: string[]; interfaces: string[] }>({ pkg: ['wasi', 'http'], interfaces: ['outgoing-handler'] });
// Blobstore links as wadm writes them, which v2 serves only for the containers in config.buckets.
const blobstore = fc.constant<{ pkg: string[]; interfaces: string[] }>({ pkg: ['wasi', 'blobstore'], interfaces: ['blobstore'] });
const linkShape = fc.record({
  target: fc.nat(NAMES.length - 1),
  import: fc.oneof({ arbitrary: anyImport, weight: 3 }, { arbitrary: outboundHttp, weight: 1 }, { arbitrary: blobstore, weight: 1 }),
  name: fc.option(fc.constantFrom('default', 'second'), { nil: undefined }),
  sourceConfig: fc.option(config, { nil: undefined }),
  targetConfig: fc.option(config, { nil: undefined }),
});
const componentShape = fc.record({
  type: fc.constantFrom('component', 'actor', 'capability'),
  image: fc.constantFrom(...IMAGES),
  shared: fc.boolean(),
  id: fc.option(fc.constantFrom('fixed-id'), { nil: undefined }),
  config: fc.array(config, { maxLength: 2 }),
  secrets: fc.nat(2),
  scalers: fc.array(scaler, { maxLength: 2 }),
  links: fc.array(linkShape, { maxLength: 3 }),
  custom: fc.boolean(),
});

type Shape = typeof componentShape extends fc.Arbitrary<infer T> ? T : never;

/** Valid by construction where validation is strict (unique link config names, no shared scalers), so few cases are thrown away. */
export function specOf(shapes: Shape[], names: string[]): Record<string, unknown> {
  const components = shapes.map((shape, i) => {
    const seen = new Set<string>();
    const links = shape.links
      .map(({ import: imported, ...rest }) => ({ ...rest, ...imported }))
      .flatMap((l, t) => {
        const keys = l.interfaces.map((iface) => `${l.name ?? 'default'} ${l.pkg.join(':')}/${iface}`);
        if (keys.some((k) => seen.has(k))) return [];
        keys.forEach((k) => seen.add(k));
        const named = (c: typeof l.sourceConfig, end: string) => (c ? [{ ...c, name: `${c.name}-${i}-${t}-${end}` }] : undefined);
        const target = { name: names[l.target % names.length]!, ...(l.targetConfig ? { config: named(l.targetConfig, 't') } : {}) };
        const properties = {
          namespace: l.pkg[0],
          package: l.pkg[1],
          interfaces: l.interfaces,
          target,
          ...(l.name ? { name: l.name } : {}),
        };
        return [
          { type: 'link', properties: l.sourceConfig ? { ...properties, source: { config: named(l.sourceConfig, 's') } } : properties },
        ];
      });
    const traits = [...(shape.shared ? [] : shape.scalers), ...links, ...(shape.custom ? [{ type: 'custom-trait', properties: {} }] : [])];
    if (shape.shared) return { name: names[i], type: shape.type, properties: { application: { name: 'common', component: 'c' } }, traits };
    const secrets = Array.from({ length: shape.secrets }, (_, s) => ({
      name: `secret-${s}`,
      properties: { policy: 'vault', key: `path/${s}` },
    }));
    const properties = { image: shape.image, ...(shape.id ? { id: `${shape.id}-${i}` } : {}), config: shape.config, secrets };
    return { name: names[i], type: shape.type, properties, traits };
  });
  const vault = { name: 'vault', type: 'policy.secret.wasmcloud.dev/v1alpha1', properties: { backend: 'vault-prod' } };
  // The policy only where a secret uses it: v2 has no policies, so an unused one is a loss by itself.
  return { components, ...(shapes.some((shape) => shape.secrets > 0) ? { policies: [vault] } : {}) };
}

/**
 * A shape without what v2 can never carry (ids, shared or file:// components, custom traits,
 * daemonscalers, provider settings, link names and link config) nor secrets, so that some conversions run as
 * converted and exit 0: the exit code properties need both sides.
 */
function plainShape(shape: Shape): Shape {
  const provider = shape.type === 'capability';
  return {
    ...shape,
    image: 'ghcr.io/acme/app:1.0.0',
    shared: false,
    id: undefined,
    custom: false,
    config: provider ? [] : shape.config,
    secrets: 0,
    scalers: provider ? [] : shape.scalers.filter((scaler) => scaler.type === 'spreadscaler'),
    links: shape.links.map((link) => ({ ...link, name: undefined, sourceConfig: undefined, targetConfig: undefined })),
  };
}

export const applications = fc.record({
  name: fc.stringMatching(/^[-\w]{1,40}$/),
  names: fc.shuffledSubarray(NAMES, { minLength: 1, maxLength: NAMES.length }),
  shapes: fc.array(componentShape, { minLength: NAMES.length, maxLength: NAMES.length }),
  /** One in four plain: see plainShape. */
  plain: fc.nat(3).map((n) => n === 0),
  extras: fc.record({
    suspend: fc.boolean(),
    lattice: fc.constantFrom('prod', undefined),
    description: fc.constantFrom('an app', undefined),
  }),
  options: fc.record({
    namespace: fc.constantFrom('apps', undefined),
    httpHost: fc.constantFrom('app.example.com', undefined),
    allowHosts: fc.subarray(['*', 'api.example.com:8443', 'https://*.example.org']),
    blobstoreBuckets: fc.subarray(['uploads', 'thumbs']),
    hostgroupFromRequirement: fc.constantFrom('region', undefined),
  }),
});

export type GeneratedApplication = typeof applications extends fc.Arbitrary<infer T> ? T : never;

/** The spec of a generated application (made plain when drawn so), with its extras (suspend, lattice, description) when set. */
export function specOfApplication({ names, shapes, plain, extras }: GeneratedApplication): Record<string, unknown> {
  const used = shapes.slice(0, names.length);
  const kept = plain ? { ...extras, lattice: undefined } : extras;
  return {
    ...specOf(plain ? used.map(plainShape) : used, names),
    ...Object.fromEntries(Object.entries(kept).filter(([, v]) => v !== undefined)),
  };
}
