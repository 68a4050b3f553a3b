// The Kubernetes Service in front of the replicas, as kube-proxy makes it: each hook call goes to
// a ready replica (round robin), readiness as the kubelet probes it (GET /readyz every probe
// period, failureThreshold 1), and a caller finds no one to talk to (its connection reset) while
// no replica is ready. Calls only; it does not look inside them.
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ServiceStandIn {
  url: string;
  /** Replicas the last probe found ready, by index. */
  ready(): number[];
  /** Calls sent to each replica, by index. */
  readonly sent: number[];
  /** Calls that found no ready replica. */
  refused: number;
  /** Probes once more now (the next probe period would anyway). */
  probe(): Promise<void>;
  close(): Promise<void>;
}

export async function startServiceStandIn(replicas: string[], options: { probeEveryMs?: number } = {}): Promise<ServiceStandIn> {
  const readiness = replicas.map(() => false);
  const sent = replicas.map(() => 0);
  let next = 0;
  const state = { refused: 0 };
  const probeOne = (url: string) =>
    fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) })
      .then((res) => res.status === 200)
      .catch(() => false);
  // Probes overlap when a replica is slow to answer; an older probe that finishes last must not
  // overwrite what a newer one saw (the kubelet never reports an older result over a newer one).
  let started = 0;
  let applied = 0;
  const probe = async () => {
    const seq = ++started;
    const results = await Promise.all(replicas.map(probeOne));
    if (seq < applied) return;
    applied = seq;
    results.forEach((ready, i) => (readiness[i] = ready));
  };
  await probe();
  const timer = setInterval(() => void probe(), options.probeEveryMs ?? 200);

  const forward = (req: IncomingMessage, res: ServerResponse) => {
    const ready = readiness.flatMap((r, i) => (r ? [i] : []));
    if (ready.length === 0) {
      state.refused++;
      return void req.socket.destroy();
    }
    const target = ready[next++ % ready.length]!;
    sent[target]!++;
    const upstream = new URL(replicas[target]!);
    const out = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (reply) => {
        res.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(res);
      },
    );
    // A replica that went away mid-call: the caller sees its connection end, as through kube-proxy.
    out.on('error', () => req.socket.destroy());
    req.pipe(out);
  };
  const sockets = new Set<Socket>();
  const server = createServer(forward);
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    ready: () => readiness.flatMap((r, i) => (r ? [i] : [])),
    sent,
    get refused() {
      return state.refused;
    },
    probe,
    async close() {
      clearInterval(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
