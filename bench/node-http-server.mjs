// Below the ceiling: Node's own http server, reading and parsing the same JSON body and answering
// the ceiling's constant 200, with no framework. What it does beyond the ceiling is what Fastify's
// routing, request and reply objects, hooks and body parser cost per call: the most that serving
// the hook routes without the framework could win. Plain JavaScript, like the ceiling.
import { createServer } from 'node:http';

const answer = JSON.stringify({ status: {}, children: [] });
const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(answer) };
const server = createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    // GET / is the bench's start probe: no body to parse.
    if (chunks.length > 0) JSON.parse(Buffer.concat(chunks).toString('utf8'));
    response.writeHead(200, headers).end(answer);
  });
});
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
