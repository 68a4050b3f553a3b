// A paced load in a process of its own, so that the benchmark's other work (and its garbage
// collections) cannot delay reading answers: one request every 1000/rate ms over keep-alive
// connections. autocannon's overallRate sends each second's quota at once and then waits, so
// its p99 measures that burst's queue, not the service at a steady rate.
// Usage: node bench/paced-client.mjs URL RATE SECONDS BODY_FILE [IF_NONE_MATCH]; prints JSON.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';

const [url, rateText, secondsText, bodyFile, etag] = process.argv.slice(2);
const rate = Number(rateText);
const body = readFileSync(bodyFile);
const agent = new Agent({ keepAlive: true, maxSockets: 64 });
const headers = { 'content-type': 'application/json', 'content-length': body.length, ...(etag ? { 'if-none-match': etag } : {}) };
const latencies = [];
const fromDue = [];
let non2xx = 0;
const total = rate * Number(secondsText);
const started = performance.now();
const inflight = [];
for (let i = 0; i < total; i++) {
  const due = started + (i * 1000) / rate;
  const wait = due - performance.now();
  if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
  inflight.push(
    new Promise((resolve) => {
      const sent = performance.now();
      const req = request(`${url}/sync`, { method: 'POST', agent, headers }, (res) => {
        res.resume();
        res.on('end', () => {
          const end = performance.now();
          if (res.statusCode !== 200 && res.statusCode !== 304) non2xx++;
          latencies.push(end - sent);
          fromDue.push(end - due);
          resolve();
        });
      });
      req.on('error', () => {
        non2xx++;
        resolve();
      });
      req.end(body);
    }),
  );
}
await Promise.all(inflight);
agent.destroy();
const at = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN) * 100) / 100;
};
process.stdout.write(
  JSON.stringify({
    rate,
    sent: total,
    p50: at(latencies, 0.5),
    p99: at(latencies, 0.99),
    max: at(latencies, 1),
    p99FromDue: at(fromDue, 0.99),
    non2xx,
  }),
);
