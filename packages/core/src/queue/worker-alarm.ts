/** A wake-up call for the claim loop's naps. A ring while nobody naps makes the next nap return at once. */
export class Alarm {
  private wake: (() => void) | undefined;
  private rung = false;

  nap(ms: number): Promise<void> {
    if (this.rung) {
      this.rung = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = Number.isFinite(ms) ? setTimeout(done, ms) : undefined;
      const self = this;
      function done(): void {
        if (timer) clearTimeout(timer);
        self.wake = undefined;
        resolve();
      }
      this.wake = done;
    });
  }

  ring(): void {
    if (this.wake) this.wake();
    else this.rung = true;
  }
}
