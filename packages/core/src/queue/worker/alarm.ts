/** A wake-up call for the claim loop's naps. A ring while nobody naps makes the next nap return at once. */
export class Alarm {
  private wake: (() => void) | undefined;
  private rung = false;

  /** Resolves after `ms`, or at once on a ring: to true when a ring ended it. */
  nap(ms: number): Promise<boolean> {
    if (this.rung) {
      this.rung = false;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const timer = Number.isFinite(ms) ? setTimeout(() => done(false), ms) : undefined;
      const done = (rang: boolean): void => {
        if (timer) clearTimeout(timer);
        this.wake = undefined;
        resolve(rang);
      };
      this.wake = () => done(true);
    });
  }

  ring(): void {
    if (this.wake) this.wake();
    else this.rung = true;
  }
}
