/** How many turns a process hands out at once, and what it learns from each that ended. */
export interface TurnLimit {
  /** Turns that may be held at once now (at least 1). */
  now(): number;
  /** A turn ended after `ms`; `full`: every turn the limit allowed was taken when it began. */
  ended(ms: number, full: boolean): void;
}

/** One turn at a time (`turns: true`). */
export const ONE_TURN: TurnLimit = { now: () => 1, ended: () => undefined };

/**
 * The fewest and most `get()`s at once a process's adaptive turns allow (with `HEADROOM` 2 the
 * limit cannot fall below 2 anyway: each step moves it towards at least limit x gradient + 2).
 */
export const ADAPTIVE_MIN = 2;
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
 * a `get()` costs when nothing competes with it. Each ended turn moves the limit a fifth of the
 * way towards limit x min(1, `TOLERANCE` x least / latest) + `HEADROOM`: it grows while latencies
 * stay near the least (a slow network, a server with cores to spare) and every turn is taken, and
 * falls when they rise (getters queueing for the server: skip-reading each other's locked rows,
 * waiting for cores). Between `ADAPTIVE_MIN` and `ADAPTIVE_MAX`. The least latency is forgotten
 * after two `MIN_WINDOW_MS` windows (at once after an idle gap that long), so a network that
 * became slower for good raises it again.
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
    if (!(ms > 0) || !Number.isFinite(ms)) return; // no measure: nothing to learn
    this.rotate(performance.now());
    this.least = Math.min(this.least, ms);
    const gradient = Math.min(1, (TOLERANCE * Math.min(this.least, this.leastBefore)) / ms);
    const estimate = this.limit * gradient + HEADROOM;
    // An idle limit says nothing about more: it grows only while every turn is taken.
    if (estimate > this.limit && !full) return;
    this.limit = Math.min(ADAPTIVE_MAX, Math.max(ADAPTIVE_MIN, (1 - SMOOTHING) * this.limit + SMOOTHING * estimate));
  }

  /** Starts a new window when the current one is `MIN_WINDOW_MS` old, forgetting both after an idle gap of two. */
  private rotate(at: number): void {
    const age = at - this.windowFrom;
    if (age < MIN_WINDOW_MS) return;
    this.leastBefore = age >= 2 * MIN_WINDOW_MS ? Infinity : this.least;
    this.least = Infinity;
    this.windowFrom = at;
  }
}
