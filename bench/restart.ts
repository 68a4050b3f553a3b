// (e): the first sync of settled applications by a fresh process (a rolling update, a crash). The
// applications are settled by one service process (synced as new, then resynced with their status
// fed back until every answer is Deployed with no resync asked); that process stops and a fresh one
// answers each application once with its settled status, with Metacontroller's 5 workers. Counted:
// the time of that pass, the wadm requests it sent (per application) and the answers whose status
// differs from the one fed in (each would be a status write). 100 applications per lattice, as a
// team's lattice: the list of 10,000 deployed applications would not fit in one NATS message.
import { isDeepStrictEqual } from 'node:util';
import type { HookRequest } from '../src/schema/hook.js';
import { startNatsServer } from '../test/support/nats-server.js';
import { appRequest } from './bodies.js';
import { startLoadWadm, type LoadWadm } from './load-wadm.js';
import { OURS_ENV, OURS_NODE_ARGS, lightPoster, pool, serve, type Pinning } from './processes.js';
import { round2 } from './rounds.js';

const PER_LATTICE = 100;

interface Answer {
  status: Record<string, unknown>;
  resyncAfterSeconds?: number;
}

export async function restart(pin: Pinning, counts: number[], policyFile: () => string) {
  const results: Record<string, unknown> = {};
  for (const count of counts) results[String(count)] = await restartOf(count, pin, policyFile());
  return results;
}

async function restartOf(count: number, pin: Pinning, policy: string) {
  const nats = await startNatsServer({ jetstream: false });
  const wadm = await startLoadWadm({ servers: nats.url, hosts: true });
  const env = { ...OURS_ENV, NATS_URL: nats.url, LATTICE_POLICY_FILE: policy };
  const requests = Array.from({ length: count }, (_, i) => appRequest(i, 'restart', `team-${Math.floor(i / PER_LATTICE)}`));
  try {
    const statuses = await settleAll(await serve('dist/main.js', { env, nodeArgs: OURS_NODE_ARGS }), requests, wadm);
    const fresh = await serve('dist/main.js', { env, pin, nodeArgs: OURS_NODE_ARGS });
    try {
      const bodies = requests.map((r, i) => JSON.stringify(withStatus(r, statuses[i]!)));
      const sync = lightPoster(fresh.url, 5);
      const before = wadm.count();
      let changed = 0;
      const started = performance.now();
      await pool(
        requests.map((_, i) => i),
        5,
        async (i) => {
          const answer = (await sync(bodies[i]!)) as Answer;
          if (!isDeepStrictEqual({ ...answer.status, observedGeneration: 1 }, statuses[i])) changed++;
        },
      );
      const seconds = (performance.now() - started) / 1000;
      const sent = wadm.count() - before;
      console.log(
        `\nrestart, ${count} settled applications (${count / PER_LATTICE} lattices) answered by a fresh process, 5 workers: ${round2(seconds)} s, ${sent} wadm requests (${round2(sent / count)} per application), ${changed} status changes`,
      );
      return {
        apps: count,
        lattices: count / PER_LATTICE,
        seconds: round2(seconds),
        wadmRequests: sent,
        perApplication: round2(sent / count),
        statusChanges: changed,
      };
    } finally {
      await fresh.stop();
    }
  } finally {
    await wadm.stop();
    await nats.dispose();
  }
}

function withStatus(request: HookRequest, status: Record<string, unknown>): HookRequest {
  return { ...request, parent: { ...request.parent, status: status as HookRequest['parent']['status'] } };
}

/** Syncs every application, feeding each answer's status back, until all are Deployed with no resync; then stops the process. */
async function settleAll(first: { url: string; stop(): Promise<void> }, requests: HookRequest[], wadm: LoadWadm) {
  const sync = lightPoster(first.url, 20);
  const statuses: Record<string, unknown>[] = [];
  const settled = new Set<number>();
  try {
    for (let pass = 0; pass < 10 && settled.size < requests.length; pass++) {
      await pool(
        requests.map((_, i) => i).filter((i) => !settled.has(i)),
        20,
        async (i) => {
          const request = statuses[i] ? withStatus(requests[i]!, statuses[i]) : requests[i]!;
          const answer = (await sync(JSON.stringify(request))) as Answer;
          const status = { ...answer.status, observedGeneration: 1 };
          if (answer.status['phase'] === 'Deployed' && answer.resyncAfterSeconds === undefined && isDeepStrictEqual(status, statuses[i]))
            settled.add(i);
          statuses[i] = status;
        },
      );
      // The load responder reports each deploy 5 ms after it; the statuses arrive before the next pass.
      await new Promise((r) => setTimeout(r, 1000));
    }
    if (settled.size < requests.length)
      throw new Error(`${requests.length - settled.size} applications did not settle (${wadm.count()} requests)`);
    return statuses;
  } finally {
    await first.stop();
  }
}
