/** A named part of one taskrow instance's memory, made on first use (see `InstanceState.get`). */
export interface Slot<T> {
  readonly name: string;
  readonly make: () => T;
}

/** A slot `name` whose value `make()` creates, once per instance. */
export const slot = <T>(name: string, make: () => T): Slot<T> => Object.freeze({ name, make });

/**
 * Everything one taskrow instance keeps in memory between calls: its queues' wake-up registries,
 * doorbell sleepers, claim read positions, kept connections, gathered enqueues and caches. Each
 * feature names its part with a `Slot` (a constant of its module) and reads it through `get`; the
 * values live here, never in a module. Two instances in one process share nothing. `stopAll()`
 * stops the workers and schedulers registered with `onStop`; `close()` waits for background work,
 * runs every closer registered with `onClose` (ending timers and kept connections) and forgets
 * every value. Neither rejects, and a stopper or closer that throws does not stop the others.
 */
export class InstanceState {
  private readonly values = new Map<Slot<unknown>, unknown>();
  private readonly closers = new Set<() => Promise<void> | void>();
  private readonly running = new Set<Promise<unknown>>();
  private readonly stoppers = new Set<(timeoutMs: number) => Promise<unknown>>();

  /** The value of `s` in this instance, made by `s.make()` on first use. */
  get<T>(s: Slot<T>): T {
    if (!this.values.has(s)) this.values.set(s, s.make());
    return this.values.get(s) as T;
  }

  /** Runs `close` when the instance closes; returns the function that unregisters it. */
  onClose(close: () => Promise<void> | void): () => void {
    this.closers.add(close);
    return () => void this.closers.delete(close);
  }

  /**
   * Registers something this instance started that runs until stopped (a worker, a scheduler):
   * `close()` calls `stop(timeoutMs)` before anything else. Returns the function that unregisters
   * it, for when it stopped by other means.
   */
  onStop(stop: (timeoutMs: number) => Promise<unknown>): () => void {
    this.stoppers.add(stop);
    return () => void this.stoppers.delete(stop);
  }

  /**
   * Runs `work` in the background, never awaited by its caller: its failure is ignored (the caller
   * chose background work whose failure the next run catches up), and `close()` waits for it.
   */
  background(work: () => Promise<unknown>): void {
    const p = work().catch(() => undefined);
    this.running.add(p);
    void p.finally(() => this.running.delete(p));
  }

  /**
   * Stops everything registered with `onStop`, all together, each given `timeoutMs` for its running
   * work; one that fails does not stop the others. MUST NOT reject.
   */
  async stopAll(timeoutMs: number): Promise<void> {
    const stoppers = [...this.stoppers];
    this.stoppers.clear();
    await Promise.allSettled(stoppers.map(async (stop) => stop(timeoutMs)));
  }

  /** Waits for background work, then runs every registered closer (each once, all together) and forgets every value. */
  async close(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
    const closers = [...this.closers];
    this.closers.clear();
    await Promise.allSettled(closers.map(async (c) => c()));
    this.values.clear();
  }
}
