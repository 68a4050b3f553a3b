// Whether wadm showed life while a request of ours waited for it. wadm serves its API one request
// at a time, for every lattice: a lattice's probe sent while wadm works through another lattice's
// slow puts and deploys waits behind them, and may time out with nothing wrong but the queue. Its
// timeout then says wadm is busy, not gone, when wadm answered meanwhile a request of ours sent
// before the probe (it was working on it while the probe waited). Only answers count: a request
// still waiting when the probe times out is waited for (within what the call has left), since an
// answer to it is the evidence and its own timeout is none; a wadm that answers nothing gives none.
// An answer that comes after we stopped waiting (the request timed out, its hook call moved on)
// counts the same: request-mux.ts keeps the tokens of timed-out requests, so wadm's late reply to
// one is still seen, and says that wadm is alive and working through its queue. So a crowded wadm
// whose every answer comes after WADM_TIMEOUT_MS still vouches for itself, as long as it answers
// while the probe waits; one that answers nothing, in time or late, shows no life here.

/** One waiting request's view: whether wadm answered a request sent before it, since it was sent. */
export interface Watch {
  /** Our order's place of the last request sent before the watch began. */
  readonly after: number;
  heard: boolean;
  wake: (() => void) | undefined;
}

export class SignsOfLife {
  private sent = 0;
  /** Requests sent and still awaited, by their place in our order: a Set keeps them in that order. */
  private readonly awaited = new Set<number>();
  private readonly watches = new Set<Watch>();

  /** A request is sent: returns its place in our order. */
  sending(): number {
    const seq = ++this.sent;
    this.awaited.add(seq);
    return seq;
  }

  /** The request sent `seq`-th ended: `answered` when wadm replied (whatever it said). */
  ended(seq: number, answered: boolean): void {
    if (this.awaited.delete(seq)) this.tell(seq, answered);
  }

  /**
   * wadm replied to the request sent `seq`-th after it had ended in a timeout: it counts as an
   * answer in time would, for the watches begun after that request was sent.
   */
  answeredLate(seq: number): void {
    this.tell(seq, true);
  }

  /** From now on, notes answers to the requests sent so far. End it with `heard()` or `end()`. */
  watch(): Watch {
    const watch: Watch = { after: this.sent, heard: false, wake: undefined };
    this.watches.add(watch);
    return watch;
  }

  /**
   * Whether wadm answered, since the watch began, a request sent before it. While some such
   * request is still awaited (neither answered nor timed out), waits for it, at most `ms`.
   */
  async heard(watch: Watch, ms: number): Promise<boolean> {
    const endsAt = performance.now() + ms;
    try {
      while (!watch.heard && this.awaitedUpTo(watch.after)) {
        const left = endsAt - performance.now();
        if (left <= 0) break;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          watch.wake = () => (clearTimeout(timer), resolve());
        });
        watch.wake = undefined;
      }
      return watch.heard;
    } finally {
      this.end(watch);
    }
  }

  end(watch: Watch): void {
    this.watches.delete(watch);
  }

  /** What became of the request sent `seq`-th reaches every watch begun after it was sent. */
  private tell(seq: number, answered: boolean): void {
    for (const watch of this.watches) {
      if (seq > watch.after) continue;
      if (answered) watch.heard = true;
      watch.wake?.();
    }
  }

  /** Some request sent at or before `seq` is still awaited: the oldest awaited is the Set's first. */
  private awaitedUpTo(seq: number): boolean {
    const oldest = this.awaited.values().next();
    return !oldest.done && oldest.value <= seq;
  }
}
