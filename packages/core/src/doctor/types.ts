/** How one check of `doctor()` came out. */
export type DoctorStatus = 'ok' | 'warn' | 'fail' | 'skipped';

/** One check of `doctor()`: what it found, and what to do about it. */
export interface DoctorCheck {
  /** Stable id, for scripts: `server`, `privileges`, `procedures`, `binlog`, ... */
  readonly id: string;
  /** `fail`: a feature taskrow needs does not work; `warn`: one works worse or may not work; `skipped`: it could not be read (see `summary`). */
  readonly status: DoctorStatus;
  /** One sentence: what was found. */
  readonly summary: string;
  /** What to do, when the status is not `ok`. */
  readonly fix?: string;
  /** Facts read, for scripts (numbers, names); no secrets. */
  readonly details?: Readonly<Record<string, unknown>>;
}

/** What `doctor()` resolves to: every check, in a fixed order. */
export interface DoctorReport {
  readonly checks: readonly DoctorCheck[];
}
