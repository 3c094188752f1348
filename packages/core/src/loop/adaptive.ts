/** How many turns a process hands out at once, and what it learns from each that ended. */
export interface TurnLimit {
  /** Turns that may be held at once now (at least 1). */
  now(): number;
  /** A turn ended after `ms`; `full`: every turn the limit allowed was taken when it began. */
  ended(ms: number, full: boolean): void;
}

/** One turn at a time (`turns: true`). */
export const ONE_TURN: TurnLimit = { now: () => 1, ended: () => undefined };

/** The fewest and most `get()`s at once a process's adaptive turns allow. */
export const ADAPTIVE_MIN = 1;
export const ADAPTIVE_MAX = 256;
/** Where the adaptive limit starts. */
const ADAPTIVE_START = 4;
/** Turns the limit leaves for queueing beyond what the latencies say the server keeps up with. */
const HEADROOM = 2;
/** Latencies up to this many times the least count as uncontended (a network's jitter is no reason to fall). */
const TOLERANCE = 1.5;
/** Weight of each new estimate in the limit (the rest is the old limit). */
const SMOOTHING = 0.2;
/** Milliseconds after which the least latency seen is forgotten (the last two windows' least is kept). */
const MIN_WINDOW_MS = 10_000;

/**
 * A limit on concurrent `get()`s that follows the latency of the ones that ran (`turns: 'auto'`),
 * in the way of TCP Vegas and Netflix's gradient limiters: the least latency seen lately is what
 * a `get()` costs when nothing competes with it; when the latencies rise above `TOLERANCE` times
 * it, the getters are queueing for the server (skip-reading each other's locked rows, waiting for cores), and the
 * limit falls towards limit x least / latest, plus `HEADROOM`. Latencies that stay near the least
 * (a slow network, a server with cores to spare) let it grow while every turn is taken. Between
 * `ADAPTIVE_MIN` and `ADAPTIVE_MAX`; the least latency is forgotten after two `MIN_WINDOW_MS`
 * windows, so a network that became slower for good raises it again.
 */
export class AdaptiveLimit implements TurnLimit {
  private limit = ADAPTIVE_START;
  private least = Infinity;
  private leastBefore = Infinity;
  private windowFrom = performance.now();

  now(): number {
    return Math.floor(this.limit);
  }

  ended(ms: number, full: boolean): void {
    const at = performance.now();
    if (at - this.windowFrom >= MIN_WINDOW_MS) [this.leastBefore, this.least, this.windowFrom] = [this.least, Infinity, at];
    this.least = Math.min(this.least, ms);
    const least = Math.min(this.least, this.leastBefore);
    const gradient = Math.min(1, (TOLERANCE * least) / Math.max(ms, Number.EPSILON));
    const estimate = this.limit * gradient + HEADROOM;
    // An idle limit says nothing about more: it grows only while every turn is taken.
    if (estimate > this.limit && !full) return;
    this.limit = Math.min(ADAPTIVE_MAX, Math.max(ADAPTIVE_MIN, (1 - SMOOTHING) * this.limit + SMOOTHING * estimate));
  }
}
