import { describe, expect, it } from 'vitest';
import { useMigratedPool } from '../../../src/setup.js';
import { label, targets } from '../../../src/targets.js';

// queue.purgeKeys() goes through a queue's key rows a window of 5,000 at a time (each window one
// transaction): over several windows it deletes exactly the rows of keys that no job holds or waits
// for a slot of and that have no limit of their own, wherever they sit.
for (const target of targets()) {
  describe(`${label(target)} · mysql2 · purgeKeys over many keys`, () => {
    const prefix = `kp${process.pid.toString(36)}_`;
    const db = useMigratedPool(target, { prefix });

    it('12,000 key rows over three windows: every idle row without a limit of its own goes, the others stay', async () => {
      const name = `many${Date.now()}`;
      const KEYS = 12_000;
      const key = (i: number): string => `key${String(i).padStart(6, '0')}`;
      // Every 7th key has a limit of its own; every 1,000th (from 500) has a running job (in each window).
      const own = (i: number): boolean => i % 7 === 0;
      const withJob = (i: number): boolean => i % 1000 === 500;
      for (let i = 0; i < KEYS; i += 2000) {
        const rows = Array.from({ length: 2000 }, (_, j) => [name, key(i + j), own(i + j) ? 3 : null]);
        await db.probe.query(
          `INSERT INTO \`${prefix}queue_keys\` (queue, conc_key, max_running) VALUES ${rows.map(() => '(?, ?, ?)').join(', ')}`,
          rows.flat(),
        );
      }
      await db.probe.query(`INSERT INTO \`${prefix}queue_keys\` (queue, conc_key, max_running) VALUES (?, '', 4)`, [name]); // the queue default
      const q = db.tr.queue<number>(name);
      await q.enqueueMany(
        Array.from({ length: KEYS }, (_, i) => i)
          .filter(withJob)
          .map((i) => ({ payload: i, concurrencyKey: key(i) })),
      );
      expect((await q.claim({ limit: 100, lease: 600_000 })).map((j) => j.payload).sort((a, b) => a - b)).toEqual(
        Array.from({ length: KEYS }, (_, i) => i).filter(withJob),
      ); // each holds its key's slot
      const expected = Array.from({ length: KEYS }, (_, i) => i).filter((i) => !own(i) && !withJob(i)).length;
      expect(await q.purgeKeys()).toBe(expected);
      const left = (await db.probe.query<{ k: string }>(`SELECT conc_key AS k FROM \`${prefix}queue_keys\` WHERE queue = ? ORDER BY conc_key`, [name])).map(
        (r) => r.k,
      );
      expect(left).toEqual([
        '',
        ...Array.from({ length: KEYS }, (_, i) => i)
          .filter((i) => own(i) || withJob(i))
          .map(key),
      ]);
      expect(await q.purgeKeys()).toBe(0);
      expect(await q.getConcurrencyLimit()).toBe(4);
      expect(await q.getConcurrencyLimit({ key: key(7) })).toBe(3);
    }, 60_000);
  });
}
