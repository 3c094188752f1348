/**
 * The ledger of a fault run, kept in the test process, outside the database: what each producer was
 * told about each job it enqueued (by a sequence number in the payload), which job ids carried each
 * sequence number, and which completions the consumers were told succeeded. Reconciled at the end
 * against what the probe finds left in the database.
 */
export interface Reconciled {
  /** Sequence numbers enqueued (confirmed or not). */
  readonly jobs: number;
  /** Confirmed enqueues never completed (confirmed or not) and not left in the database. */
  readonly lost: number;
  /** Extra job ids beyond one per sequence number. */
  readonly duplicated: number;
  /** Sequence numbers whose completion was confirmed more than once. */
  readonly doubleCompletions: number;
  /** Sequence numbers still in the database at the end (not drained). */
  readonly stranded: number;
  /** Operations that rejected to the caller. */
  readonly errors: number;
  /** Up to five of their messages. */
  readonly errorSamples: readonly string[];
}

export class Ledger {
  private readonly enqueued = new Map<number, 'confirmed' | 'uncertain'>();
  private readonly ids = new Map<number, Set<number>>();
  private readonly completions = new Map<number, number>();
  private readonly unconfirmed = new Set<number>();
  private errorCount = 0;
  private readonly samples: string[] = [];

  /** A producer's call for `seqs` resolved to `ids` (same order), or rejected (`ids` null). */
  enqueue(seqs: readonly number[], ids: readonly number[] | null): void {
    seqs.forEach((seq, i) => {
      this.enqueued.set(seq, ids ? 'confirmed' : 'uncertain');
      if (ids) this.sawId(seq, ids[i]!);
    });
  }

  /** A job carrying `seq` was seen with `id` (claimed, or run by a handler). */
  sawId(seq: number, id: number): void {
    const set = this.ids.get(seq) ?? new Set<number>();
    set.add(id);
    this.ids.set(seq, set);
  }

  /** The completion of `seq` was confirmed to a consumer. */
  completed(seq: number): void {
    this.completions.set(seq, (this.completions.get(seq) ?? 0) + 1);
  }

  /** An ack of `seq` rejected: it may or may not have been applied. */
  ackUncertain(seq: number): void {
    this.unconfirmed.add(seq);
  }

  /** An operation rejected to its caller. */
  error(err: unknown): void {
    this.errorCount += 1;
    if (this.samples.length < 5) this.samples.push(`${(err as { code?: string }).code ?? ''} ${(err as Error).message ?? String(err)}`.trim().slice(0, 200));
  }

  /** Confirmed completions so far. */
  get completedCount(): number {
    return this.completions.size;
  }

  /** Reconciles against the `{ id, seq }` rows the probe found left in the database. */
  reconcile(left: readonly { id: number; seq: number }[]): Reconciled {
    for (const r of left) this.sawId(r.seq, r.id);
    const leftSeqs = new Set(left.map((r) => r.seq));
    let lost = 0;
    for (const [seq, how] of this.enqueued) {
      if (how === 'confirmed' && !this.completions.has(seq) && !this.unconfirmed.has(seq) && !leftSeqs.has(seq)) lost += 1;
    }
    let duplicated = 0;
    for (const set of this.ids.values()) duplicated += set.size - 1;
    const doubleCompletions = [...this.completions.values()].filter((n) => n > 1).length;
    return { jobs: this.enqueued.size, lost, duplicated, doubleCompletions, stranded: leftSeqs.size, errors: this.errorCount, errorSamples: this.samples };
  }
}
