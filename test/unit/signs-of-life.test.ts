// When a probe's timeout says wadm is busy rather than gone: an answer, while the probe waited, to
// a request of ours sent before it, in time or after that request timed out. Pure bookkeeping,
// counted in our own order of requests.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SignsOfLife } from '../../src/lattice/signs-of-life.js';

describe('signs of life of a busy wadm', () => {
  it('counts an answer to a request sent before the probe, given while it waited', async () => {
    const life = new SignsOfLife();
    const put = life.sending();
    const watch = life.watch();
    const probe = life.sending();
    life.ended(put, true);
    life.ended(probe, false);
    assert.equal(await life.heard(watch, 0), true, 'wadm answered the put the probe waited behind');
  });

  it('does not count answers given before the probe, to requests sent after it, or timeouts', async () => {
    const life = new SignsOfLife();
    const early = life.sending();
    life.ended(early, true);
    const stalled = life.sending();
    const watch = life.watch();
    const probe = life.sending();
    const later = life.sending();
    life.ended(later, true);
    life.ended(stalled, false);
    life.ended(probe, false);
    assert.equal(await life.heard(watch, 0), false, 'no answer to anything wadm had before the probe');
  });

  it('waits for a request sent before the probe that is still awaited: its answer counts, its timeout does not', async () => {
    const life = new SignsOfLife();
    const answered = life.sending();
    const timedOut = life.sending();
    const first = life.watch();
    const second = life.watch();
    const heard = life.heard(first, 60_000);
    life.ended(answered, true);
    assert.equal(await heard, true, 'the answer ends the wait');
    const notHeard = (() => {
      const watch = life.watch();
      return life.heard(watch, 60_000);
    })();
    life.ended(timedOut, false);
    assert.equal(await notHeard, false, 'nothing awaited is left: the wait ends without an answer');
    assert.equal(await life.heard(second, 60_000), true, 'the answer counted for every watch begun before it');
  });

  it('counts a late answer, to a request sent before the probe that had timed out, given while it waited', async () => {
    const life = new SignsOfLife();
    const put = life.sending();
    life.ended(put, false); // timed out: its hook call moved on
    const watch = life.watch();
    const probe = life.sending();
    life.answeredLate(put);
    life.ended(probe, false);
    assert.equal(await life.heard(watch, 0), true, 'wadm worked through the put the probe waited behind');
  });

  it('does not count late answers given before the probe, or to requests sent after it', async () => {
    const life = new SignsOfLife();
    const early = life.sending();
    life.ended(early, false);
    life.answeredLate(early); // before the probe: says nothing of what it waited behind
    const watch = life.watch();
    const probe = life.sending();
    const later = life.sending();
    life.ended(later, false);
    life.answeredLate(later);
    life.ended(probe, false);
    assert.equal(await life.heard(watch, 0), false);
  });

  it('ends the wait for a request still awaited as soon as a late answer comes', async () => {
    const life = new SignsOfLife();
    const stillAwaited = life.sending();
    const timedOut = life.sending();
    life.ended(timedOut, false);
    const watch = life.watch();
    const heard = life.heard(watch, 60_000);
    life.answeredLate(timedOut);
    assert.equal(await heard, true, 'heard before the awaited request ended');
    life.ended(stillAwaited, false);
  });
});
