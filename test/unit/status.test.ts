import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildStatus, fromWadm, healedBefore, resyncDelay, resyncJitter, RESYNC_JITTER } from '../../src/core/status.js';
import type { WadmStatus } from '../../src/lattice/wire.js';

const NOW = Date.parse('2026-11-30T12:00:00Z');
const context = { generation: 3, lattice: 'default', previous: undefined, now: NOW };

function statusFor(wadm: WadmStatus, predatesDeploy = false) {
  return buildStatus(context, fromWadm('v1', 'default', { status: wadm, predatesDeploy }));
}

const conditions = (answer: ReturnType<typeof statusFor>) => answer.status.conditions!.map((c) => `${c.type}=${c.status}/${c.reason}`);

describe('mapping wadm status to our status', () => {
  const table: [string, string, string[], number | undefined][] = [
    ['deployed', 'Deployed', ['Ready=True/Deployed'], undefined],
    ['ready', 'Deployed', ['Ready=True/Deployed'], undefined],
    ['reconciling', 'Reconciling', ['Ready=False/Reconciling', 'Reconciling=True/Reconciling'], 2],
    ['compensating', 'Reconciling', ['Ready=False/Reconciling', 'Reconciling=True/Reconciling'], 2],
    ['waiting', 'Waiting', ['Ready=False/WaitingForHosts', 'Reconciling=True/WaitingForHosts'], 2],
    ['undeployed', 'Undeployed', ['Ready=False/Progressing', 'Reconciling=True/Progressing'], 2],
    ['failed', 'Failed', ['Ready=False/ScalerFailed', 'Stalled=True/ScalerFailed'], 60],
    ['unhealthy', 'Unhealthy', ['Ready=False/Unhealthy', 'Stalled=True/Unhealthy'], 60],
  ];
  for (const [type, phase, expected, resync] of table) {
    it(`maps wadm "${type}" to phase ${phase}`, () => {
      const answer = statusFor({ status: { type: type as never } });
      assert.equal(answer.status.phase, phase);
      assert.deepEqual(conditions(answer), expected);
      assert.equal(answer.resyncAfterSeconds, resync);
      assert.equal(answer.status.observedGeneration, 3);
      assert.ok(answer.status.conditions!.every((c) => c.observedGeneration === 3));
    });
  }

  it('never says Ready from a status that may predate our deploy', () => {
    const answer = statusFor({ status: { type: 'deployed' } }, true);
    assert.equal(answer.status.phase, 'Reconciling');
    assert.deepEqual(conditions(answer), ['Ready=False/Progressing', 'Reconciling=True/Progressing']);
    assert.equal(answer.status.scalers, undefined);
  });

  it('uses the message of the first failing scaler when wadm gives no top-level message', () => {
    const answer = statusFor({
      status: { type: 'failed' },
      scalers: [
        { id: '1', kind: 'SpreadScaler', name: 'b', status: { type: 'deployed' } },
        {
          id: '2',
          kind: 'SpreadScaler',
          name: 'a',
          status: { type: 'failed', message: 'Could not satisfy spread default for img, 0/1 eligible hosts found.' },
        },
      ],
    });
    assert.match(answer.status.message!, /0\/1 eligible hosts/);
    assert.deepEqual(
      answer.status.scalers!.map((s) => s.name),
      ['a', 'b'],
    );
  });

  it("sorts scalers so that wadm's order does not churn the status", () => {
    const scalers = [
      { id: '1', kind: 'SpreadScaler', name: 'z', status: { type: 'deployed' as const } },
      { id: '2', kind: 'LinkScaler', name: 'y', status: { type: 'deployed' as const } },
    ];
    const a = statusFor({ status: { type: 'deployed' }, scalers });
    const b = statusFor({ status: { type: 'deployed' }, scalers: [...scalers].reverse() });
    assert.equal(JSON.stringify(a), JSON.stringify(b));
  });

  it('keeps messages to a bounded length', () => {
    const answer = statusFor({ status: { type: 'failed', message: 'x'.repeat(10_000) } });
    assert.ok(answer.status.message!.length <= 1024);
  });

  it('never cuts a message between the halves of a surrogate pair', () => {
    for (const pad of [1021, 1022, 1023]) {
      const message = statusFor({ status: { type: 'failed', message: 'x'.repeat(pad) + '🙂'.repeat(20) } }).status.message!;
      assert.ok(message.length <= 1024);
      assert.doesNotMatch(message, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])/, `a lone high surrogate with pad ${pad}`);
    }
  });
});

describe('resync', () => {
  it('starts short and grows while progressing, and stops once settled', () => {
    assert.deepEqual(
      [0, 20_000, 120_000, 3_600_000].map((age) => resyncDelay('progressing', age)),
      [2, 5, 15, 60],
    );
    assert.deepEqual(
      [0, 20_000, 120_000, 3_600_000].map((age) => resyncDelay('unavailable', age)),
      [5, 10, 30, 60],
    );
    assert.equal(resyncDelay('settled', 0), undefined);
  });

  it("measures progress from the Ready condition's last transition", () => {
    const previous = {
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'Reconciling',
          message: '',
          lastTransitionTime: '2026-11-30T11:58:00Z',
          observedGeneration: 3,
        },
      ],
    };
    const answer = buildStatus(
      { ...context, previous },
      fromWadm('v1', 'default', { status: { status: { type: 'reconciling' } }, predatesDeploy: false }),
    );
    assert.equal(answer.status.conditions![0]!.lastTransitionTime, '2026-11-30T11:58:00Z');
    assert.equal(answer.resyncAfterSeconds, 15);
  });

  it('is spread ±10 % over resources by their identity, and the same for the same resource every time', () => {
    const names = Array.from({ length: 2000 }, (_, i) => `team-${i % 7}/app-${i}`);
    for (const delay of [2, 5, 30, 60]) {
      const spread = names.map((name) => resyncJitter(delay, name));
      const low = Math.min(...spread);
      const high = Math.max(...spread);
      assert.ok(low >= delay * (1 - RESYNC_JITTER) && high <= delay * (1 + RESYNC_JITTER), `${delay} s: ${low}..${high}`);
      // Covers the range, not a corner of it: within 2 % of each end, and the mean near the delay.
      assert.ok(low <= delay * 0.92 && high >= delay * 1.08, `${delay} s spreads over ${low}..${high}`);
      const mean = spread.reduce((sum, s) => sum + s, 0) / spread.length;
      assert.ok(Math.abs(mean - delay) < delay * 0.01, `${delay} s: mean ${mean}`);
      // Each tenth of the range gets some: no lockstep of a few values.
      const tenths = new Set(spread.map((s) => Math.min(9, Math.floor(((s / delay - 0.9) / 0.2) * 10))));
      if (delay >= 30) assert.equal(tenths.size, 10, `${delay} s fills every tenth of ±10 %`);
      for (const name of names.slice(0, 50)) assert.equal(resyncJitter(delay, name), resyncJitter(delay, name));
    }
  });

  it('goes into the answer: the same resource and state give the same resyncAfterSeconds, another resource another', () => {
    const reconciling = fromWadm('v1', 'default', { status: { status: { type: 'reconciling' } }, predatesDeploy: false });
    // Reconciling for an hour: the 60 s step.
    const previous = { conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: '2026-11-30T11:00:00Z' }] };
    const answers = ['default/a', 'default/a', 'default/b'].map(
      (identity) => buildStatus({ ...context, previous, identity }, reconciling).resyncAfterSeconds,
    );
    assert.equal(answers[0], resyncJitter(60, 'default/a'));
    assert.equal(answers[1], answers[0]);
    assert.notEqual(answers[2], answers[0]);
    assert.equal(buildStatus(context, reconciling).resyncAfterSeconds, 2, 'without an identity (the CLI), none');
  });

  it('ignores a previous lastTransitionTime that is not a timestamp', () => {
    const previous = { conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: 'yesterday' }] };
    const answer = buildStatus(
      { ...context, previous },
      fromWadm('v1', 'default', { status: { status: { type: 'reconciling' } }, predatesDeploy: false }),
    );
    assert.equal(answer.status.conditions![0]!.lastTransitionTime, '2026-11-30T12:00:00Z');
  });
});

describe('the drift a deploy healed, kept while wadm has not reported it', () => {
  const healed = 'wadm had version v1 deployed outside Kubernetes';
  const waiting = `${healed}; redeployed version v2; waiting for wadm to report its status`;
  it('is read back from the previous message, also as a move decorates it', () => {
    assert.equal(healedBefore({ message: waiting }, 'v2'), healed);
    const moving = `Moving to lattice "b": ${waiting}; the application is left as it is in former lattice "a" until wadm reports it deployed in lattice "b"`;
    assert.equal(healedBefore({ message: moving }, 'v2'), healed);
  });
  it('is nothing for another version or another message', () => {
    assert.equal(healedBefore({ message: waiting }, 'v3'), undefined);
    assert.equal(healedBefore({ message: 'Deployed version v2; waiting for wadm to report its status' }, 'v2'), undefined);
    assert.equal(healedBefore(undefined, 'v2'), undefined);
  });
});
