// The ceiling for this stack: Fastify with the same body limit, parsing the same JSON body and
// answering a constant 200. Plain JavaScript, so that nothing but Fastify and JSON.parse costs.
// With CEILING_ANSWER set, that constant is the given JSON text (ours' own answer, to tell what the
// answer's size costs from what our code costs).
import Fastify from 'fastify';

const app = Fastify({ bodyLimit: 16 * 1024 * 1024, logger: false });
const answer = process.env.CEILING_ANSWER;
if (answer) app.post('/sync', (_request, reply) => void reply.type('application/json; charset=utf-8').send(answer));
else app.post('/sync', async () => ({ status: {}, children: [] }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
