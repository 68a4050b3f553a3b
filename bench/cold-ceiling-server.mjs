// The cold path's ceiling: the least any hook must do for a new application. Fastify parses the
// hook request, the spec becomes a wadm manifest (JSON.stringify, no validation), and versions,
// put and deploy go to wadm over nats.js, each awaited as ours does; the answer is a constant-shaped
// status. Plain JavaScript, so that nothing but Fastify, nats.js and JSON costs.
import Fastify from 'fastify';
import { connect, headers } from 'nats';

const nc = await connect({ servers: process.env.NATS_URL, noAsyncTraces: true });
const app = Fastify({ bodyLimit: 16 * 1024 * 1024, logger: false });
const json = headers();
json.set('Content-Type', 'application/json');

app.post('/sync', async (request) => {
  const { metadata, spec } = request.body.parent;
  const { lattice = 'default', ...rest } = spec;
  const name = metadata.name;
  const manifest = {
    apiVersion: 'core.oam.dev/v1beta1',
    kind: 'Application',
    metadata: { name, annotations: { version: 'v1' } },
    spec: rest,
  };
  const api = `wadm.api.${lattice}.model`;
  await nc.request(`${api}.versions.${name}`, '', { timeout: 10_000 });
  await nc.request(`${api}.put`, JSON.stringify(manifest), { timeout: 10_000, headers: json });
  await nc.request(`${api}.deploy.${name}`, JSON.stringify({ version: 'v1' }), { timeout: 10_000 });
  return {
    status: { version: 'v1', deployedVersion: 'v1', lattice, conditions: [{ type: 'Ready', status: 'False', reason: 'Deploying' }] },
    children: [],
  };
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.on('SIGTERM', () =>
  app
    .close()
    .then(() => nc.drain())
    .then(() => process.exit(0)),
);
