import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTaskrow, type SqlClient } from '@taskrow/core';
import { mysql2Client, taskrow, type Mysql2Connection } from '@taskrow/mysql2';
import { useMigratedPool } from '../../../src/setup.js';
import { label, targets } from '../../../src/targets.js';

/**
 * `enqueueMany` returns each job's id in the order of its items. A small batch's CALL (schema
 * version 30) counts them from the first insert id where the server makes one statement's ids
 * consecutive (`innodb_autoinc_lock_mode` 0 or 1, MariaDB's default) and reads them back by the
 * batch's mark where it does not (2, MySQL's default); these cases step the ids, send batches from
 * several producers at once, and check every id against the row that holds the item's payload.
 */
for (const target of targets()) {
  describe(`${label(target)} · mysql2 · enqueueMany ids`, () => {
    const prefix = `ei${process.pid.toString(36)}_`;
    // Six connections: enough for two producers and the rings of their enqueues (a ring waits for its enqueue's commit).
    const db = useMigratedPool(target, { prefix, connectionLimit: 6 });
    let plain: mysql.Pool;
    // A second pool: its connections are set up as they open, which the shared pool's are not.
    let stepped: mysql.Pool;

    beforeAll(() => {
      plain = db.pool;
      stepped = mysql.createPool({ uri: target.url, connectionLimit: 4 });
      // Every connection of this pool hands out ids 3 apart, as a node of a multi-writer cluster does.
      stepped.pool.on('connection', (c) => void c.query('SET SESSION auto_increment_increment = 3'));
    });
    afterAll(async () => {
      await stepped.end();
    });

    const payloadsById = async (queue: string): Promise<Map<number, unknown>> => {
      const [rows] = await plain.query<mysql.RowDataPacket[]>('SELECT id, payload FROM ?? WHERE queue = ?', [`${prefix}queue_jobs`, queue]);
      return new Map(rows.map((r) => [Number(r['id']), JSON.parse(String(r['payload']))]));
    };

    for (const [name, pool] of [
      ['ids one apart', () => plain],
      ['ids three apart (auto_increment_increment = 3)', () => stepped],
    ] as const) {
      it(`with ${name}, each returned id is the row of its item, batch after batch (25 in a CALL, 40 in the client's transaction)`, async () => {
        const tr = await taskrow(pool(), { prefix });
        const q = tr.queue(`q${Date.now()}${name.length}`);
        const sizes = [25, 40, 25, 40];
        const returned: number[] = [];
        for (const [batch, size] of sizes.entries()) {
          const out = await q.enqueueMany(Array.from({ length: size }, (_, i) => ({ payload: { batch, i } })));
          expect(out.every((e) => !e.deduplicated)).toBe(true);
          returned.push(...out.map((e) => e.id));
        }
        const stored = await payloadsById(q.name);
        expect(stored.size).toBe(130);
        expect(returned.map((id) => stored.get(id))).toEqual(sizes.flatMap((size, batch) => Array.from({ length: size }, (_, i) => ({ batch, i }))));
      });
    }

    for (const keys of [true, false])
      it(`a batch of 40 (one INSERT in the client's transaction) ${keys ? 'with' : 'without'} dedup keys stores each item's own options in its row`, async () => {
        const tr = await taskrow(plain, { prefix });
        const q = tr.queue(`o.${Date.now()}:x-${keys}`);
        const items = Array.from({ length: 40 }, (_, i) => ({
          payload: { i },
          ...(i % 4 === 1 ? { priority: -7 - i, group: `g.${i}:a-b` } : {}),
          ...(i % 4 === 2 ? { delay: 3_600_000, maxAttempts: 3, priority: 9 } : {}),
          ...(i % 4 === 3 ? { concurrencyKey: `k'${i}"\\`, ...(keys ? { dedupKey: `d${i}` } : {}) } : {}),
        }));
        const out = await q.enqueueMany(items);
        const [rows] = await plain.query<mysql.RowDataPacket[]>(
          'SELECT id, queue, grp, phase, priority, ready_priority, max_attempts, dedup_k IS NOT NULL AS keyed, conc_key, TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(6), due_at) AS ahead, payload FROM ?? WHERE queue = ?',
          [`${prefix}queue_jobs`, q.name],
        );
        const byId = new Map(rows.map((r) => [Number(r['id']), r]));
        expect(out.map((e) => JSON.parse(String(byId.get(e.id)?.['payload'])))).toEqual(items.map((it) => it.payload));
        for (const [i, e] of out.entries()) {
          const r = byId.get(e.id)!;
          const kind = i % 4;
          expect([r['queue'], r['grp'], Number(r['priority']), Number(r['max_attempts']), Number(r['keyed']), r['conc_key']]).toEqual([
            q.name,
            kind === 1 ? `g.${i}:a-b` : '',
            kind === 1 ? -7 - i : kind === 2 ? 9 : 0,
            kind === 2 ? 3 : 5,
            kind === 3 && keys ? 1 : 0,
            kind === 3 ? `k'${i}"\\` : null,
          ]);
          // Ready (phase 0) with its priority in line; delayed (1) an hour ahead, or waiting for its key's slot, with no priority in line.
          expect([Number(r['phase']), Number(r['ready_priority'])]).toEqual(kind >= 2 ? [1, 0] : [0, kind === 1 ? -7 - i : 0]);
          if (kind === 2) expect(Number(r['ahead'])).toBeGreaterThan(3500);
          else expect(Number(r['ahead'])).toBeLessThanOrEqual(0);
        }
      });

    it("each row of a batch carries its own token, one more than the row before, in a CALL and in the client's transaction", async () => {
      const tr = await taskrow(plain, { prefix });
      const q = tr.queue(`t${Date.now()}`);
      for (const size of [10, 40]) {
        const out = await q.enqueueMany(Array.from({ length: size }, (_, i) => ({ payload: i })));
        const [rows] = await plain.query<mysql.RowDataPacket[]>('SELECT id, token FROM ?? WHERE id IN (?)', [`${prefix}queue_jobs`, out.map((e) => e.id)]);
        const token = new Map(rows.map((r) => [Number(r['id']), Number(r['token'])]));
        const first = token.get(out[0]!.id)!;
        expect(out.map((e) => token.get(e.id)! - first)).toEqual(Array.from({ length: size }, (_, i) => i));
      }
    });

    it("the server hands out ids in the mode these cases cover: MariaDB one statement's consecutive, MySQL interleaved", async () => {
      const [[row]] = await plain.query<mysql.RowDataPacket[]>('SELECT @@innodb_autoinc_lock_mode AS m');
      expect(Number(row!['m'])).toBe(target.engine === 'mariadb' ? 1 : 2);
    });

    for (const [name, pool] of [
      ['ids one apart', () => plain],
      ['ids three apart', () => stepped],
    ] as const) {
      it(`with ${name}, batches from four producers at once each get their own rows' ids`, async () => {
        const size = (batch: number): number => (batch % 2 === 0 ? 10 : 40);
        const tr = await taskrow(pool(), { prefix });
        const q = tr.queue(`c${Date.now()}${name.length}`);
        const returned = await Promise.all(
          [0, 1, 2, 3].map(async (producer) => {
            const ids: number[] = [];
            // Batches of 10 (one CALL each) and of 40 (the client's transaction) in turns.
            for (let batch = 0; batch < 16; batch++) {
              ids.push(...(await q.enqueueMany(Array.from({ length: size(batch) }, (_, i) => ({ payload: { producer, batch, i } })))).map((e) => e.id));
            }
            return ids;
          }),
        );
        const stored = await payloadsById(q.name);
        expect(stored.size).toBe(4 * 8 * 50);
        for (const [producer, ids] of returned.entries()) {
          expect(ids.map((id) => stored.get(id))).toEqual(
            Array.from({ length: 16 }, (_, batch) => Array.from({ length: size(batch) }, (_, i) => ({ producer, batch, i }))).flat(),
          );
        }
      });
    }

    it("batches of 10 (one CALL each) from eight producers at once never deadlock: with retries off, every batch gets its own rows' ids", async () => {
      // Under MySQL's interleaved ids, a check that locked the row at the end of a batch's id range
      // met other batches' uncommitted rows there: some of these 800 CALLs deadlocked (1213).
      const q = `d${Date.now()}`;
      // A connection of its own per producer, as eight processes would have (retries off, unlike the shared taskrow).
      const conns = await Promise.all(Array.from({ length: 8 }, () => mysql.createConnection(target.url)));
      try {
        const failures: unknown[] = [];
        const returned = await Promise.all(
          conns.map(async (conn, producer) => {
            const queue = (await taskrow(conn, { prefix, retry: { attempts: 1 } })).queue(q);
            const ids: number[] = [];
            for (let batch = 0; batch < 100; batch++) {
              const items = Array.from({ length: 10 }, (_, i) => ({ payload: { producer, batch, i } }));
              await queue.enqueueMany(items).then(
                (out) => ids.push(...out.map((e) => e.id)),
                (err: unknown) => failures.push(err),
              );
            }
            return ids;
          }),
        );
        expect(failures).toEqual([]);
        const stored = await payloadsById(q);
        expect(stored.size).toBe(8000);
        for (const [producer, ids] of returned.entries()) {
          expect(ids.map((id) => stored.get(id))).toEqual(Array.from({ length: 1000 }, (_, k) => ({ producer, batch: Math.floor(k / 10), i: k % 10 })));
        }
      } finally {
        await Promise.all(conns.map((c) => c.end()));
      }
    });

    it('a batch whose transaction is still open holds up no other producer: its ids check locks nothing', async () => {
      const name = `open${Date.now()}`;
      // Producer A's transactions stop after their last statement, before COMMIT, until released.
      let release: () => void = () => undefined;
      const held = new Promise<void>((r) => (release = r));
      let reached: () => void = () => undefined;
      const atCommit = new Promise<void>((r) => (reached = r));
      const inner = mysql2Client(plain);
      // No kept connection (`session`): every transaction sets its own isolation level, as under load.
      const gated: SqlClient = {
        ...inner,
        session: undefined,
        transaction: (fn, options) =>
          inner.transaction(async (conn) => {
            const out = await fn(conn);
            reached();
            await held;
            return out;
          }, options),
      };
      const a = (await createTaskrow<Mysql2Connection>({ client: gated, joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } })).queue(name);
      const b = (await taskrow(plain, { prefix })).queue(name);
      const first = a.enqueueMany(Array.from({ length: 40 }, (_, i) => ({ payload: { by: 'a', i } })));
      await atCommit;
      // Bounds the failure only: a producer B waiting on A's locks finishes after this, never before.
      let released = false;
      const bound = setTimeout(() => ((released = true), release()), 10_000);
      try {
        const second = await b.enqueueMany(Array.from({ length: 40 }, (_, i) => ({ payload: { by: 'b', i } })));
        expect(released, 'B waited for A to commit').toBe(false);
        release();
        const ids = [...(await first).map((e) => e.id), ...second.map((e) => e.id)];
        const stored = await payloadsById(name);
        expect(ids.map((id) => stored.get(id))).toEqual([
          ...Array.from({ length: 40 }, (_, i) => ({ by: 'a', i })),
          ...Array.from({ length: 40 }, (_, i) => ({ by: 'b', i })),
        ]);
      } finally {
        clearTimeout(bound);
        release();
        await first.catch(() => undefined);
      }
    });
  });
}
