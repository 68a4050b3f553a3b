// The ceiling for this stack: Fastify with the same body limit, parsing the same JSON body and
// answering a constant 200. Plain JavaScript, so that nothing but Fastify and JSON.parse costs.
import Fastify from 'fastify';

const app = Fastify({ bodyLimit: 16 * 1024 * 1024, logger: false });
app.post('/sync', async () => ({ status: {}, children: [] }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
