import { performance } from 'node:perf_hooks';

/**
 * The part of a lease a holder gives up, so that it stops trusting the lease before the database
 * can hand it to someone else even when its timers fire late: 10% of the lease, at least 50 ms and
 * at most 5 s.
 */
export function leaseMargin(leaseMs: number): number {
  return Math.min(5000, Math.max(50, leaseMs * 0.1));
}

/**
 * A lease as its holder sees it, on the local monotonic clock. The database starts a lease (or an
 * extension) when it runs the statement, which is never before the statement was sent; so a lease
 * counted from the send time ends no later than the database's. `end` is that time minus
 * `leaseMargin`. When it passes without a newer confirmed start, `onExpire` runs once: the holder
 * MUST then stop acting as the lease's owner. `expired` is true from that moment on.
 */
export class LeaseDeadline {
  private endsAt: number;
  private timer: NodeJS.Timeout | undefined;
  private fired = false;

  /**
   * @param leaseMs the lease length the statement asked for
   * @param sentAt `performance.now()` when the statement that started the lease was sent
   */
  constructor(
    private readonly leaseMs: number,
    sentAt: number,
    private readonly onExpire: () => void,
  ) {
    this.endsAt = sentAt + leaseMs - leaseMargin(leaseMs);
    this.arm();
  }

  /** Local monotonic time (ms) at which the holder stops trusting the lease. */
  get end(): number {
    return this.endsAt;
  }

  get expired(): boolean {
    return this.fired || performance.now() >= this.endsAt;
  }

  /** Milliseconds left before `end` (negative once passed). */
  remaining(now = performance.now()): number {
    return this.endsAt - now;
  }

  /**
   * A renewal sent at `sentAt` was confirmed by the database: the lease now runs from then. MUST
   * NOT revive a lease whose deadline already fired, and never moves the end earlier.
   */
  renewed(sentAt: number, leaseMs = this.leaseMs): void {
    if (this.fired) return;
    const end = sentAt + leaseMs - leaseMargin(leaseMs);
    if (end <= this.endsAt) return;
    this.endsAt = end;
    this.arm();
  }

  /** Stops watching (the lease was released or handed back); `onExpire` will not run. */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    this.stop();
    this.timer = setTimeout(() => this.check(), Math.max(0, this.endsAt - performance.now()));
    this.timer.unref();
  }

  private check(): void {
    this.timer = undefined;
    const left = this.endsAt - performance.now();
    if (left > 0) {
      this.arm(); // timers may fire a little early
      return;
    }
    this.fired = true;
    this.onExpire();
  }
}
