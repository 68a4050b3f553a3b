// The wadm test double against a real nats-server: every wire example of reference §3, the
// delete table of §5, put's Content-Type and validation rules, the fixtures' documented put
// results, status publishing, simulated hosts, fault injection and pause/resume.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { connect, ErrorCode, headers, type NatsConnection, type NatsError } from 'nats';
import { startFakeWadm, statusSubject, type FakeWadm, type Status } from './support/fake-wadm.js';
import { readFixture } from './support/fixtures.js';
import { startNatsServer, type NatsServer } from './support/nats-server.js';

let server: NatsServer;
let nc: NatsConnection;
let wadm: FakeWadm;
let lattice: string;
let latticeCount = 0;

before(async () => {
  server = await startNatsServer();
  nc = await connect({ servers: server.url });
  wadm = await startFakeWadm({ servers: server.url });
});

after(async () => {
  await wadm.stop();
  await nc.close();
  await server.dispose();
});

beforeEach(() => {
  wadm.reset();
  lattice = `lattice${++latticeCount}`;
});

// ---- helpers ------------------------------------------------------------------------------------

type Reply = Record<string, unknown>;

function subject(op: string, name?: string, l = lattice): string {
  return `wadm.api.${l}.model.${op}${name === undefined ? '' : `.${name}`}`;
}

async function request(subj: string, body: string | Uint8Array = '', contentType?: string): Promise<unknown> {
  const h = headers();
  if (contentType !== undefined) h.set('Content-Type', contentType);
  const msg = await nc.request(subj, body, { timeout: 2_000, headers: h });
  return JSON.parse(msg.string());
}

const call = (op: string, name?: string, body: string | Uint8Array = ''): Promise<Reply> =>
  request(subject(op, name), body) as Promise<Reply>;

const put = (body: string | Uint8Array, contentType?: string): Promise<Reply> =>
  request(subject('put'), body, contentType) as Promise<Reply>;

/** A small valid manifest: one component with a spreadscaler. */
function manifest(name = 'hello-world', version?: string, image = 'ghcr.io/wasmcloud/components/http-hello-world-rust:0.1.0'): string {
  return [
    'apiVersion: core.oam.dev/v1beta1',
    'kind: Application',
    'metadata:',
    `  name: ${name}`,
    '  annotations:',
    '    description: HTTP hello world demo',
    ...(version === undefined ? [] : [`    version: ${version}`]),
    'spec:',
    '  components:',
    '    - name: http-component',
    '      type: component',
    '      properties:',
    `        image: ${image}`,
    '      traits:',
    '        - type: spreadscaler',
    '          properties:',
    '            instances: 1',
    '',
  ].join('\n');
}

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** Collects status messages of one app as parsed JSON. */
function watchStatus(name: string, l = lattice) {
  const sub = nc.subscribe(statusSubject(l, name));
  const seen: Status[] = [];
  const waiters: (() => void)[] = [];
  void (async () => {
    for await (const m of sub) {
      seen.push(m.json<Status>());
      waiters.splice(0).forEach((w) => w());
    }
  })();
  return {
    seen,
    async next(count: number, ms = 2_000): Promise<Status[]> {
      const deadline = Date.now() + ms;
      while (seen.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} status messages, got ${JSON.stringify(seen)}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
      return seen.slice(0, count);
    },
    stop: () => sub.unsubscribe(),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function eventually(check: () => boolean, ms = 2_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(10);
  }
}

// ---- subjects -----------------------------------------------------------------------------------

describe('subjects', () => {
  it('a subject with more than six tokens gets the extra-components error', async () => {
    assert.deepEqual(await request(`wadm.api.${lattice}.model.get.my.app`), {
      result: 'error',
      message: 'Invalid subject: Found extra components of subject, ensure your manifest name consists of only alphanumeric characters, dashes, and underscores.',
    });
  });

  it('a subject that stops after the lattice reports the missing category', async () => {
    assert.deepEqual(await request(`wadm.api.${lattice}`), { result: 'error', message: 'Invalid subject: Expected to find API category' });
  });

  it('unknown operations and categories, and ops with a missing or extra name, are unsupported subjects', async () => {
    for (const s of [subject('frobnicate', 'x'), `wadm.api.${lattice}.other.get.x`, subject('put', 'x'), subject('del')]) {
      assert.deepEqual(await request(s), { result: 'error', message: `Unsupported subject: ${s}` });
    }
  });

  it('replicas share the wadm_server queue group, so each request is handled once', async () => {
    const second = await startFakeWadm({ servers: server.url });
    try {
      for (let i = 0; i < 20; i++) await call('status', 'x');
      assert.equal(wadm.count('status') + second.count('status'), 20);
    } finally {
      await second.stop();
    }
  });

  it('a custom api prefix is honoured', async () => {
    const custom = await startFakeWadm({ servers: server.url, apiPrefix: ' .custom.api. ' });
    try {
      assert.equal(custom.apiPrefix, 'custom.api');
      const reply = await request(`custom.api.${lattice}.model.status.x`);
      assert.equal((reply as Reply)['result'], 'ok');
      assert.equal(wadm.count(), 0);
    } finally {
      await custom.stop();
    }
  });
});

// ---- §3 wire examples ---------------------------------------------------------------------------

describe('wire examples of reference §3', () => {
  it('put names the previous current version in its message', async () => {
    assert.deepEqual(await put(manifest('hello-world', 'v0.0.1')), {
      result: 'created', total_versions: 1, current_version: 'v0.0.1',
      message: 'Successfully put manifest hello-world ', name: 'hello-world',
    });
    assert.deepEqual(await put(manifest('hello-world', 'v0.0.2')), {
      result: 'newversion', total_versions: 2, current_version: 'v0.0.2',
      message: 'Successfully put manifest hello-world v0.0.1', name: 'hello-world',
    });
  });

  it('putting an existing version fails whether or not the content changed', async () => {
    await put(manifest('hello-world', 'v0.0.1'));
    const expected = { result: 'error', message: 'Manifest version v0.0.1 already exists' };
    assert.deepEqual(await put(manifest('hello-world', 'v0.0.1')), expected);
    assert.deepEqual(await put(manifest('hello-world', 'v0.0.1', 'ghcr.io/other:1')), expected);
    assert.deepEqual(wadm.model(lattice, 'hello-world')?.versions, ['v0.0.1']);
  });

  it('a put without a version gets a new ULID every time', async () => {
    const first = await put(manifest());
    const second = await put(manifest());
    assert.match(String(first['current_version']), ULID);
    assert.match(String(second['current_version']), ULID);
    assert.notEqual(first['current_version'], second['current_version']);
    assert.equal(second['result'], 'newversion');
    const stored = wadm.model(lattice, 'hello-world')?.manifests.get(String(first['current_version'])) as Reply;
    assert.deepEqual((stored['metadata'] as Reply)['annotations'], {
      description: 'HTTP hello world demo', version: first['current_version'],
    });
  });

  it('get returns the current manifest, a named version, or notfound without a manifest key', async () => {
    await put(manifest('hello-world', 'v0.0.1'));
    await put(manifest('hello-world', 'v0.0.2'));
    const current = await call('get', 'hello-world');
    assert.deepEqual(Object.keys(current), ['result', 'message', 'manifest']);
    assert.equal(current['result'], 'success');
    assert.equal(current['message'], 'Successfully fetched application hello-world');
    const m = current['manifest'] as Reply;
    assert.equal(m['apiVersion'], 'core.oam.dev/v1beta1');
    assert.equal(((m['metadata'] as Reply)['annotations'] as Reply)['version'], 'v0.0.2');

    const old = await call('get', 'hello-world', '{"version":"v0.0.1"}');
    assert.equal(old['message'], 'Successfully fetched application hello-world v0.0.1');
    assert.deepEqual(await call('get', 'hello-world', '{"version":"v9"}'), {
      result: 'notfound', message: "Application hello-world with version v9 doesn't exist",
    });
    assert.deepEqual(await call('get', 'foo'), { result: 'notfound', message: 'Application with the name foo not found' });
  });

  it('model.get without a name lists summaries inside the models wrapper, waiting before any status', async () => {
    await put(manifest('hello-world', 'v0.0.1'));
    await call('deploy', 'hello-world');
    assert.deepEqual(await call('get'), {
      result: 'success',
      message: 'Successfully fetched list of applications',
      models: [{
        name: 'hello-world', version: 'v0.0.1', description: 'HTTP hello world demo', deployed_version: 'v0.0.1',
        detailed_status: {
          status: { type: 'waiting', message: 'Waiting for status: Lattice contains no hosts, deployment not started.' },
          version: '', components: [],
        },
        status: 'undeployed',
        status_message: 'Waiting for status: Lattice contains no hosts, deployment not started.',
      }],
    });
  });

  it('the deprecated model.list answers a bare array sorted by name, with null for absent options', async () => {
    await put(manifest('zeta', 'v1').replace('    description: HTTP hello world demo\n', ''));
    await put(manifest('alpha', 'v1'));
    const models = (await request(subject('list'))) as Reply[];
    assert.ok(Array.isArray(models));
    assert.deepEqual(models.map((m) => m['name']), ['alpha', 'zeta']);
    assert.equal(models[1]?.['description'], null);
    assert.equal(models[1]?.['deployed_version'], null);
  });

  it('versions come oldest first with the deployed flag; an unknown app is notfound with an empty list', async () => {
    await put(manifest('hello-world', 'v0.0.1'));
    await put(manifest('hello-world', 'v0.0.2'));
    await call('deploy', 'hello-world');
    assert.deepEqual(await call('versions', 'hello-world'), {
      result: 'success',
      message: 'Successfully fetched versions for application hello-world',
      versions: [{ version: 'v0.0.1', deployed: false }, { version: 'v0.0.2', deployed: true }],
    });
    assert.deepEqual(await call('versions', 'foo'), {
      result: 'notfound', message: 'Application with the name foo not found', versions: [],
    });
  });

  it('deploy and undeploy replies carry the name and the version, null once undeployed', async () => {
    await put(manifest('hello-world', 'v0.0.1'));
    await put(manifest('hello-world', 'v0.0.2'));
    assert.deepEqual(await call('deploy', 'hello-world'), {
      result: 'acknowledged', message: 'Successfully deployed application hello-world v0.0.2',
      name: 'hello-world', version: 'v0.0.2',
    });
    assert.deepEqual(await call('undeploy', 'hello-world'), {
      result: 'acknowledged', message: 'Successfully undeployed application hello-world', name: 'hello-world', version: null,
    });
    assert.deepEqual(await call('undeploy', 'hello-world'), {
      result: 'acknowledged', message: 'Application hello-world was already undeployed', name: 'hello-world', version: null,
    });
    const notFound = { result: 'notfound', message: 'Application with the name foo not found', name: 'foo', version: null };
    assert.deepEqual(await call('deploy', 'foo'), notFound);
    assert.deepEqual(await call('undeploy', 'foo'), notFound);
  });

  it('an empty body, {}, a null version and "latest" all deploy the last put version', async () => {
    await put(manifest('hello-world', 'v0.0.1'));
    await put(manifest('hello-world', 'v0.0.2'));
    for (const body of ['', '{}', '{"version":null}', '{"version":"latest"}']) {
      await call('deploy', 'hello-world', '{"version":"v0.0.1"}');
      assert.equal((await call('deploy', 'hello-world', body))['version'], 'v0.0.2', `body ${body}`);
      assert.equal(wadm.model(lattice, 'hello-world')?.deployed, 'v0.0.2');
    }
  });

  it('deploying a version that does not exist is an error that names it', async () => {
    await put(manifest('hello-world', 'v0.0.1'));
    assert.deepEqual(await call('deploy', 'hello-world', '{"version":"v9"}'), {
      result: 'error', message: "Application with the name 'hello-world' does not have a version 'v9' to deploy",
      name: 'hello-world', version: 'v9',
    });
    assert.equal(wadm.model(lattice, 'hello-world')?.deployed, null);
  });

  it('status of an unknown app is ok and undeployed, with the double status nesting', async () => {
    assert.deepEqual(await call('status', 'foo'), {
      result: 'ok', message: 'Successfully fetched status for application foo',
      status: { status: { type: 'undeployed' }, version: '', components: [] },
    });
  });

  it('history is always an error', async () => {
    assert.deepEqual(await call('history', 'hello-world'), {
      result: 'error', message: 'Model deployment history is not currently supported. It may be added in a future version',
    });
  });

  it('a body that is not JSON is an error naming the request type', async () => {
    for (const [op, what] of [['get', 'get'], ['del', 'delete'], ['deploy', 'deploy'], ['undeploy', 'undeploy']] as const) {
      const reply = await call(op, 'hello-world', 'not json');
      assert.deepEqual(Object.keys(reply), ['result', 'message']);
      assert.equal(reply['result'], 'error');
      assert.match(String(reply['message']), new RegExp(`^Unable to parse ${what} application request: `));
    }
  });

  it('undeploy ignores extra fields such as non_destructive', async () => {
    await put(manifest('hello-world', 'v1'));
    await call('deploy', 'hello-world');
    assert.equal((await call('undeploy', 'hello-world', '{"non_destructive":true}'))['result'], 'acknowledged');
  });

  it('a request without a reply subject gets no reply but still takes effect', async () => {
    nc.publish(subject('put'), manifest('fire-and-forget', 'v1'));
    await nc.flush();
    await call('status', 'x'); // requests are handled in order, so the put is done
    assert.deepEqual(wadm.model(lattice, 'fire-and-forget')?.versions, ['v1']);
  });
});

// ---- §5 delete table ----------------------------------------------------------------------------

describe('delete (reference §5 table)', () => {
  async function threeVersions(deployed: string): Promise<void> {
    for (const v of ['v1', 'v2', 'v3']) await put(manifest('app', v));
    await call('deploy', 'app', JSON.stringify({ version: deployed }));
  }

  it('without a version (empty, {} or a null version) every version is deleted and the app undeployed', async () => {
    for (const body of ['', '{}', '{"version":null}']) {
      await threeVersions('v2');
      assert.deepEqual(await call('del', 'app', body), {
        result: 'deleted', message: 'Successfully deleted application app', undeploy: true,
      });
      assert.equal(wadm.model(lattice, 'app'), undefined);
    }
  });

  it('deleting the deployed version undeploys the app without falling back to another version', async () => {
    await threeVersions('v2');
    assert.deepEqual(await call('del', 'app', '{"version":"v2"}'), {
      result: 'deleted', message: 'Successfully deleted version v2 of application app', undeploy: true,
    });
    assert.deepEqual(wadm.model(lattice, 'app')?.versions, ['v1', 'v3']);
    assert.equal(wadm.model(lattice, 'app')?.deployed, null);
  });

  it('deleting a version that is not deployed keeps the deployment', async () => {
    await threeVersions('v2');
    assert.deepEqual(await call('del', 'app', '{"version":"v1"}'), {
      result: 'deleted', message: 'Successfully deleted version v1 of application app', undeploy: false,
    });
    assert.equal(wadm.model(lattice, 'app')?.deployed, 'v2');
  });

  it('deleting the last version deletes the app', async () => {
    await put(manifest('app', 'v1'));
    assert.deepEqual(await call('del', 'app', '{"version":"v1"}'), {
      result: 'deleted', message: 'Successfully deleted last version of application app', undeploy: true,
    });
    assert.equal(wadm.model(lattice, 'app'), undefined);
  });

  it('a missing version or a missing app is a noop', async () => {
    await put(manifest('app', 'v1'));
    assert.deepEqual(await call('del', 'app', '{"version":"v9"}'), {
      result: 'noop', message: "Application version v9 doesn't exist", undeploy: false,
    });
    assert.deepEqual(await call('del', 'foo'), {
      result: 'noop', message: "Application foo doesn't exist or was already deleted", undeploy: false,
    });
  });
});

// ---- put: Content-Type and validation ------------------------------------------------------------

describe('put Content-Type (reference §1.3)', () => {
  const json = JSON.stringify({
    apiVersion: 'core.oam.dev/v1beta1', kind: 'Application',
    metadata: { name: 'json-app', annotations: { version: 'v1' } },
    spec: { components: [{ name: 'c', type: 'component', properties: { image: 'i' } }] },
  });

  it('application/json and application/yaml parse their own format', async () => {
    assert.equal((await put(json, 'application/json'))['result'], 'created');
    assert.equal((await put(manifest('yaml-app', 'v1'), 'application/yaml'))['result'], 'created');
  });

  it('without the header YAML is tried first, then JSON', async () => {
    assert.equal((await put(manifest('yaml-app', 'v1')))['result'], 'created');
    assert.equal((await put(json))['result'], 'created');
  });

  it('any other value is refused, charset parameter included', async () => {
    for (const ct of ['application/json; charset=utf-8', 'text/yaml', 'application/x-yaml', '']) {
      assert.deepEqual(await put(json, ct), {
        result: 'error',
        message: `Unable to parse manifest: Unsupported content type ${ct} given. Wadm supports YAML and JSON`,
      });
    }
    assert.equal(wadm.model(lattice, 'json-app'), undefined);
  });

  it('the header key must be exactly Content-Type: another spelling counts as no header', async () => {
    const h = headers();
    h.set('content-type', 'text/plain');
    const reply = (await nc.request(subject('put'), json, { timeout: 2_000, headers: h })).json<Reply>();
    assert.equal(reply['result'], 'created');
    assert.equal(wadm.requests.at(-1)?.contentType, undefined);
  });

  it('YAML sent as application/json is a parse error', async () => {
    const reply = await put(manifest('yaml-app', 'v1'), 'application/json');
    assert.deepEqual(Object.keys(reply), ['result', 'message']);
    assert.match(String(reply['message']), /^Unable to parse manifest: /);
  });
});

describe('put validation', () => {
  const expectError = async (body: string, message: string | RegExp, contentType?: string): Promise<void> => {
    const reply = await put(body, contentType);
    assert.deepEqual(Object.keys(reply), ['result', 'message']);
    assert.equal(reply['result'], 'error');
    if (typeof message === 'string') assert.equal(reply['message'], message);
    else assert.match(String(reply['message']), message);
  };

  it('"latest" is not a version', async () => {
    await expectError(manifest('app', 'latest'), 'invalid manifest version, errors: "latest is not allowed in wadm"');
  });

  it('names must match ^[-\\w]+$, with put\'s own message', async () => {
    await expectError(manifest('my.app', 'v1'),
      'Manifest name my.app contains invalid characters. Manifest names can only contain alphanumeric characters, dashes, and underscores.');
  });

  it('component names must be unique', async () => {
    const body = manifest('app', 'v1') + '    - name: http-component\n      type: capability\n      properties:\n        image: other\n';
    await expectError(body, 'Duplicate component name in manifest: http-component');
  });

  it('unknown keys are refused on the manifest, component properties and traits', async () => {
    await expectError(manifest('app', 'v1') + 'status: {}\n', /^Unable to parse manifest: .*unknown field `status`/);
    await expectError(manifest('app', 'v1').replace('        image:', '        bogus: 1\n        image:'), /unknown field `bogus`/);
    await expectError(manifest('app', 'v1') + '          incorrect: true\n', /unknown field `incorrect`, expected `type` or `properties`/);
  });

  it('unknown keys in metadata and on a component are ignored, as wadm-types does', async () => {
    const body = manifest('app', 'v1').replace('  annotations:', '  namespace: default\n  annotations:')
      .replace('      type: component', '      type: component\n      extra: ignored');
    assert.equal((await put(body))['result'], 'created');
  });

  it('non-string config values and JSON annotation numbers are parse errors', async () => {
    const config = manifest('app', 'v1').replace('        image:', '        config:\n          - name: c\n            properties:\n              port: 8080\n        image:');
    await expectError(config, /invalid type: integer `8080`, expected a string/);
    const json = JSON.stringify({
      apiVersion: 'x', kind: 'y', metadata: { name: 'app', annotations: { version: 1 } }, spec: { components: [] },
    });
    await expectError(json, 'Unable to parse manifest: invalid type: integer `1`, expected a string', 'application/json');
  });

  it('plain YAML scalars in annotations are read as their text, as serde_yaml does', async () => {
    const reply = await put(manifest('app', '1.0'));
    assert.equal(reply['current_version'], '1.0');
  });

  it('a link to a component missing from the manifest names it', async () => {
    const body = manifest('app', 'v1') +
      '        - type: link\n          properties:\n            namespace: wasi\n            package: http\n' +
      '            interfaces: [outgoing-handler]\n            target:\n              name: x\n';
    await expectError(body, 'The following capability component(s) are missing from the manifest: ["x"]');
  });

  it('a link with a non-string name gets no reply at all, where wadm would panic and exit (§13 item 13)', async () => {
    const body = manifest('app', 'v1') +
      '        - type: link\n          properties:\n            namespace: wasi\n            package: http\n' +
      '            interfaces: [x]\n            target: http-component\n            name: null\n';
    await assert.rejects(nc.request(subject('put'), body, { timeout: 300 }), (e: NatsError) => e.code === ErrorCode.Timeout);
    assert.equal(wadm.model(lattice, 'app'), undefined);
  });

  it('a scaler trait with fields that do not parse is refused', async () => {
    await expectError(manifest('app', 'v1').replace('instances: 1', 'instances: "1"'),
      'Scaler trait deserialized as custom trait, ensure fields are correct: {"instances":"1"}');
  });

  it('wadm re-serializes what it stores: legacy keys become their current form', async () => {
    await put(readFixture('daemonscaler.yaml'));
    const stored = (await call('get', 'http'))['manifest'] as { spec: { components: Reply[] } };
    const provider = stored.spec.components[1] as { traits: { properties: Reply }[] };
    assert.deepEqual(provider.traits[1]?.properties, {
      namespace: 'wasi', package: 'http', interfaces: ['incoming-handler'],
      source: { config: [{ name: 'local', properties: { address: '0.0.0.0:8080' } }] },
      target: { name: 'http' }, name: 'http',
    });
  });
});

describe('fixtures give their documented put results', () => {
  for (const name of ['hello.yaml', 'complex.yaml', 'daemonscaler.yaml', 'shared-http.yaml']) {
    it(`${name} is created with a generated ULID version`, async () => {
      const reply = await put(readFixture(name));
      assert.equal(reply['result'], 'created');
      assert.match(String(reply['current_version']), ULID);
    });
  }

  it('secrets-policy.yaml is created as v0.0.1 and a second put says it already exists', async () => {
    assert.equal((await put(readFixture('secrets-policy.yaml')))['current_version'], 'v0.0.1');
    assert.deepEqual(await put(readFixture('secrets-policy.yaml')), {
      result: 'error', message: 'Manifest version v0.0.1 already exists',
    });
  });

  it('shared-http-dev.yaml is created but names the undeployed shared components, and deploys once shared-http is deployed', async () => {
    const reply = await put(readFixture('shared-http-dev.yaml'));
    assert.equal(reply['result'], 'created');
    assert.match(String(reply['message']),
      /^Successfully put manifest shared-http-dev , but some shared components are not deployed: \[Component \{ name: "http-client-this", /);
    assert.deepEqual(await call('deploy', 'shared-http-dev'), {
      result: 'error',
      message: 'Application contains shared components that are not deployed in other applications: ["http-client-this", "httpserver"]',
    });
    await put(readFixture('shared-http.yaml'));
    assert.equal((await call('deploy', 'shared-http'))['result'], 'acknowledged');
    assert.equal((await call('deploy', 'shared-http-dev'))['result'], 'acknowledged');
  });

  it('invalid-dangling-link.yaml names the missing target', async () => {
    assert.deepEqual(await put(readFixture('invalid-dangling-link.yaml')), {
      result: 'error', message: 'The following capability component(s) are missing from the manifest: ["httpclient"]',
    });
  });

  it('invalid-made-up-key.yaml cannot be parsed', async () => {
    const reply = await put(readFixture('invalid-made-up-key.yaml'));
    assert.equal(reply['result'], 'error');
    assert.match(String(reply['message']), /^Unable to parse manifest: .*unknown field `incorrect`/s);
  });

  it('an explicit component id already deployed by another app blocks the deploy', async () => {
    await put(readFixture('complex.yaml'));
    await call('deploy', 'complex');
    await put(readFixture('complex.yaml').toString().replace('name: complex', 'name: complex2'));
    assert.deepEqual(await call('deploy', 'complex2'), {
      result: 'error',
      message: "Component identifier 'littleblobbytables' is already deployed in a different application 'complex'.",
    });
  });
});

// ---- status --------------------------------------------------------------------------------------

describe('status', () => {
  it('without hosts a deploy publishes nothing and status stays undeployed', async () => {
    const watch = watchStatus('hello-world');
    await put(manifest('hello-world', 'v1'));
    await call('deploy', 'hello-world');
    await sleep(200);
    watch.stop();
    assert.deepEqual(watch.seen, []);
    assert.deepEqual((await call('status', 'hello-world'))['status'], { status: { type: 'undeployed' }, version: '', components: [] });
  });

  it('healthy hosts report reconciling, then deployed, as bare Status payloads', async () => {
    wadm.setHosts(lattice, { behaviour: 'healthy', settleMs: 50 });
    const watch = watchStatus('hello-world');
    await put(manifest('hello-world', 'v1'));
    await call('deploy', 'hello-world');
    const [reconciling, deployed] = await watch.next(2);
    watch.stop();
    const id = reconciling?.scalers?.[0]?.id ?? '';
    assert.match(id, /^[0-9a-f]{64}$/);
    const scaler = { id, kind: 'SpreadScaler', name: 'hello_world-http_component' };
    assert.deepEqual(reconciling, {
      status: { type: 'reconciling', message: 'Scaling component on 1 host(s)' },
      scalers: [{ ...scaler, status: { type: 'reconciling', message: 'Scaling component on 1 host(s)' } }],
      version: '', components: [],
    });
    assert.deepEqual(deployed, {
      status: { type: 'deployed' }, scalers: [{ ...scaler, status: { type: 'deployed' } }], version: '', components: [],
    });
    const reply = await call('status', 'hello-world');
    assert.deepEqual(reply, { result: 'ok', message: 'Successfully fetched status for application hello-world', status: deployed });
  });

  it('failing hosts report failed with the unsatisfied spread', async () => {
    wadm.setHosts(lattice, { behaviour: 'failing' });
    const watch = watchStatus('hello-world');
    await put(manifest('hello-world', 'v1'));
    await call('deploy', 'hello-world');
    const [failed] = await watch.next(1);
    watch.stop();
    const message = 'Could not satisfy spread default for ghcr.io/wasmcloud/components/http-hello-world-rust:0.1.0, 0/1 eligible hosts found.';
    assert.deepEqual(failed?.status, { type: 'failed', message });
  });

  it('scalers are named like wadm names them: spreads, implicit provider spreads and links', async () => {
    wadm.setHosts(lattice, { behaviour: 'healthy', settleMs: 10_000 });
    const watch = watchStatus('hello-world');
    await put(readFixture('hello.yaml'));
    await call('deploy', 'hello-world');
    const [reconciling] = await watch.next(1);
    watch.stop();
    assert.deepEqual(reconciling?.scalers?.map((s) => [s.kind, s.name, s.status.message]), [
      ['SpreadScaler', 'hello_world-http_component', 'Scaling component on 1 host(s)'],
      ['LinkScaler', 'hello_world-httpserver -(wasi:http)-> hello_world-http_component',
        'Putting link definition between hello_world-httpserver and hello_world-http_component'],
      ['SpreadScaler', 'hello_world-httpserver', 'Scaling provider on 1 host(s)'],
    ]);
    assert.equal(reconciling?.status.message, reconciling?.scalers?.map((s) => s.status.message).join(', '));
  });

  it('daemonscalers and explicit ids show up in scaler kinds and names', async () => {
    wadm.setHosts(lattice, { behaviour: 'failing' });
    const daemons = watchStatus('http');
    const complex = watchStatus('complex');
    await put(readFixture('daemonscaler.yaml'));
    await call('deploy', 'http');
    await put(readFixture('complex.yaml'));
    await call('deploy', 'complex');
    const [d] = await daemons.next(1);
    const [c] = await complex.next(1);
    daemons.stop();
    complex.stop();
    assert.deepEqual(d?.scalers?.map((s) => [s.kind, s.name]), [
      ['DaemonScaler', 'http-http'], ['DaemonScaler', 'http-provider'], ['LinkScaler', 'http-provider -(wasi:http)-> http-http'],
    ]);
    assert.match(d?.status.message ?? '', /Could not satisfy daemonscaler default for ghcr\.io\/wasmcloud\/components\/http-hello-world-rust:0\.1\.0, 0 eligible hosts found\./);
    assert.deepEqual(c?.scalers?.map((s) => s.name), [
      'littleblobbytables', 'littleblobbytables -(wasi:blobstore)-> fileserver', 'http_server',
      'http_server -(wasi:http)-> littleblobbytables', 'fileserver',
    ]);
  });

  it('undeploy publishes the undeployed status once: an unchanged status is not published again', async () => {
    wadm.setHosts(lattice, { behaviour: 'failing' });
    const watch = watchStatus('hello-world');
    await put(manifest('hello-world', 'v1'));
    await call('deploy', 'hello-world');
    await call('deploy', 'hello-world'); // same failed status again: not republished
    await call('undeploy', 'hello-world');
    await call('undeploy', 'hello-world');
    await sleep(150);
    watch.stop();
    assert.deepEqual(watch.seen.map((s) => s.status.type), ['failed', 'undeployed']);
    assert.deepEqual(watch.seen[1], {
      status: { type: 'undeployed', message: 'Manifest has been undeployed' }, version: '', components: [],
    });
  });

  it('deleting the deployed version publishes the undeployed status', async () => {
    wadm.setHosts(lattice, { behaviour: 'failing' });
    const watch = watchStatus('app');
    await put(manifest('app', 'v1'));
    await put(manifest('app', 'v2'));
    await call('deploy', 'app');
    await call('del', 'app', '{"version":"v2"}');
    const [, undeployed] = await watch.next(2);
    watch.stop();
    assert.equal(undeployed?.status.message, 'Manifest has been undeployed');
  });

  it('hosts that join later make deployed apps report status', async () => {
    const watch = watchStatus('hello-world');
    await put(manifest('hello-world', 'v1'));
    await call('deploy', 'hello-world');
    wadm.setHosts(lattice, { behaviour: 'healthy', settleMs: 20 });
    const statuses = await watch.next(2);
    watch.stop();
    assert.deepEqual(statuses.map((s) => s.status.type), ['reconciling', 'deployed']);
  });

  it('publishStatus injects any status, which model.status and the list then report', async () => {
    const watch = watchStatus('hello-world');
    await put(manifest('hello-world', 'v1'));
    const injected: Status = { status: { type: 'unhealthy', message: 'provider crashed' }, version: '', components: [] };
    await wadm.publishStatus(lattice, 'hello-world', injected);
    await wadm.publishStatus(lattice, 'hello-world', injected); // injection always publishes
    const seen = await watch.next(2);
    watch.stop();
    assert.deepEqual(seen, [injected, injected]);
    assert.deepEqual((await call('status', 'hello-world'))['status'], injected);
    const [summary] = (await call('get'))['models'] as Reply[];
    assert.equal(summary?.['status'], 'unhealthy');
    assert.equal(summary?.['status_message'], 'provider crashed');
  });

  it('a status published by anyone else on the subject is what model.status returns, as wadm reads the stream', async () => {
    const other: Status = { status: { type: 'deployed' }, version: '', components: [] };
    nc.publish(statusSubject(lattice, 'app'), JSON.stringify(other));
    await nc.flush();
    await eventually(() => wadm.lastStatus(lattice, 'app') !== undefined);
    assert.deepEqual((await call('status', 'app'))['status'], other);
    nc.publish(statusSubject(lattice, 'app'), 'not json');
    await nc.flush();
    await eventually(() => wadm.lastStatus(lattice, 'app') === undefined);
    assert.deepEqual((await call('status', 'app'))['status'], { status: { type: 'undeployed' }, version: '', components: [] });
  });

  it('statuses are kept per lattice', async () => {
    wadm.setHosts(lattice, { behaviour: 'failing' });
    await put(manifest('hello-world', 'v1'));
    await call('deploy', 'hello-world');
    await sleep(50);
    assert.equal(wadm.lastStatus(lattice, 'hello-world')?.status.type, 'failed');
    assert.equal(wadm.lastStatus('other', 'hello-world'), undefined);
    assert.deepEqual(await request(subject('get', 'hello-world', 'other')), {
      result: 'notfound', message: 'Application with the name hello-world not found',
    });
  });
});

// ---- faults, pause, inspection ------------------------------------------------------------------

describe('fault injection', () => {
  it('a storage error answers exactly like wadm and changes nothing', async () => {
    wadm.inject('put', { kind: 'storage-error' });
    assert.deepEqual(await put(manifest('app', 'v1')), { result: 'error', message: 'Internal storage error' });
    assert.equal(wadm.model(lattice, 'app'), undefined);
    assert.equal((await put(manifest('app', 'v1')))['result'], 'created');
  });

  it('delete reports its storage error with the app name and undeploy false', async () => {
    wadm.inject('del', { kind: 'storage-error' });
    assert.deepEqual(await call('del', 'app'), {
      result: 'error', message: 'Internal storage error while fetching manifest data for application app', undeploy: false,
    });
  });

  it('a fault applies the given number of times, and * matches every operation', async () => {
    wadm.inject('status', { kind: 'error', message: 'boom' }, { times: 2 });
    assert.deepEqual(await call('status', 'x'), { result: 'error', message: 'boom' });
    assert.deepEqual(await call('status', 'x'), { result: 'error', message: 'boom' });
    assert.equal((await call('status', 'x'))['result'], 'ok');
    wadm.inject('*', { kind: 'error', message: 'any' });
    assert.deepEqual(await call('versions', 'x'), { result: 'error', message: 'any' });
  });

  it('a delay holds the reply back', async () => {
    wadm.inject('deploy', { kind: 'delay', ms: 300 });
    const start = Date.now();
    assert.equal((await call('deploy', 'foo'))['result'], 'notfound');
    assert.ok(Date.now() - start >= 280, `took ${Date.now() - start} ms`);
  });

  it('no-reply drops the request, or with apply loses only the reply', async () => {
    wadm.inject('put', { kind: 'no-reply' });
    await assert.rejects(nc.request(subject('put'), manifest('app', 'v1'), { timeout: 300 }),
      (e: NatsError) => e.code === ErrorCode.Timeout);
    assert.equal(wadm.model(lattice, 'app'), undefined);

    wadm.inject('put', { kind: 'no-reply', apply: true });
    await assert.rejects(nc.request(subject('put'), manifest('app', 'v1'), { timeout: 300 }),
      (e: NatsError) => e.code === ErrorCode.Timeout);
    assert.deepEqual(wadm.model(lattice, 'app')?.versions, ['v1']);
    assert.deepEqual(await put(manifest('app', 'v1')), { result: 'error', message: 'Manifest version v1 already exists' });
  });

  it('after pause requests fail with no responders, after resume they are served again', async () => {
    await wadm.pause();
    try {
      await assert.rejects(nc.request(subject('status', 'x'), '', { timeout: 1_000 }),
        (e: NatsError) => e.code === ErrorCode.NoResponders);
    } finally {
      await wadm.resume();
    }
    assert.equal((await call('status', 'x'))['result'], 'ok');
  });
});

describe('inspection', () => {
  it('the request log records op, lattice, name, subject, content type and body', async () => {
    await put(manifest('app', 'v1'), 'application/yaml');
    await call('deploy', 'app', '{}');
    await call('get');
    assert.deepEqual(wadm.requests.map(({ body, ...rest }) => rest), [
      { op: 'put', lattice, subject: subject('put'), contentType: 'application/yaml' },
      { op: 'deploy', lattice, name: 'app', subject: subject('deploy', 'app') },
      { op: 'get', lattice, subject: subject('get') },
    ]);
    assert.equal(wadm.requests[1]?.body, '{}');
    assert.equal(wadm.count('deploy'), 1);
    assert.equal(wadm.count(), 3);
  });

  it('model() shows versions in insertion order, the deployed version and each manifest as get returns it', async () => {
    await put(manifest('app', 'v2'));
    await put(manifest('app', 'v1'));
    await call('deploy', 'app', '{"version":"v2"}');
    const state = wadm.model(lattice, 'app');
    assert.deepEqual(state?.versions, ['v2', 'v1']);
    assert.equal(state?.deployed, 'v2');
    assert.deepEqual(state?.manifests.get('v1'), (await call('get', 'app', '{"version":"v1"}'))['manifest']);
    assert.equal(wadm.model('other-lattice', 'app'), undefined);
  });

  it('reset forgets apps, faults and the request log', async () => {
    await put(manifest('app', 'v1'));
    wadm.inject('get', { kind: 'error', message: 'x' });
    wadm.reset();
    assert.equal(wadm.model(lattice, 'app'), undefined);
    assert.equal(wadm.count(), 0);
    assert.equal((await call('get', 'app'))['result'], 'notfound');
  });
});

describe('nats-server restarts', () => {
  it('the double reconnects and keeps its state when nats-server restarts', async (t) => {
    const own = await startNatsServer();
    const double = await startFakeWadm({ servers: own.url });
    const client = await connect({ servers: own.url, maxReconnectAttempts: -1, reconnectTimeWait: 50 });
    t.after(async () => {
      await client.close();
      await double.stop();
      await own.dispose();
    });
    const ask = async (op: string, name?: string, body = '') =>
      (await client.request(`wadm.api.l.model.${op}${name ? `.${name}` : ''}`, body, { timeout: 2_000 })).json<Reply>();

    assert.equal((await ask('put', undefined, manifest('app', 'v1')))['result'], 'created');
    const reconnected = (async () => {
      for await (const status of client.status()) if (status.type === 'reconnect') return;
    })();
    await own.stop();
    await own.restart();
    await reconnected;
    // The double reconnects on its own schedule: until then the request finds no responders.
    for (let attempt = 1; ; attempt++) {
      try {
        assert.equal((await ask('versions', 'app'))['result'], 'success');
        break;
      } catch (e) {
        if ((e as NatsError).code !== ErrorCode.NoResponders || attempt === 50) throw e;
        await sleep(50);
      }
    }
  });
});
