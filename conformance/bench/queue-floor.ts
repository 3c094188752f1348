import mysql from 'mysql2/promise';

// The floor: the least work taskrow's schema can do per job of a drain. The same table, rows and
// indexes as taskrow's queue (filled by enqueueMany), but no claim search, no locking read, no
// transaction, no JSON, no validation: each consumer owns a slice of the ids and, 100 at a time,
// runs one UPDATE by primary key that moves the rows to running (the claim's index change) and one
// DELETE by primary key (the completion), each in autocommit. Every drain figure reads as a
// fraction of this.

/** A floor drain's outcome. */
export interface FloorResult {
  readonly rate: number;
  readonly capped: boolean;
}

/**
 * `consumers` connections (each its own) drain queue `name` of `prefix`'s jobs table as the floor
 * does, until every job is gone or `capSeconds` pass; leftover rows are deleted afterwards.
 */
export async function floorDrain(url: string, prefix: string, name: string, consumers: number, capSeconds: number, batch = 100): Promise<FloorResult> {
  const t = `\`${prefix}queue_jobs\``;
  const conns = await Promise.all(Array.from({ length: consumers }, () => mysql.createConnection(url)));
  const [rows] = await conns[0]!.query<mysql.RowDataPacket[]>(`SELECT id FROM ${t} WHERE queue = ? ORDER BY id`, [name]);
  const ids = rows.map((r) => Number(r['id']));
  const slices = Array.from({ length: consumers }, (_, c) => ids.filter((_, i) => i % consumers === c));
  let done = 0;
  const t0 = performance.now();
  const deadline = t0 + capSeconds * 1000;
  await Promise.all(
    conns.map(async (conn, c) => {
      const mine = slices[c]!;
      for (let i = 0; i < mine.length && performance.now() < deadline; i += batch) {
        const part = mine.slice(i, i + batch);
        const list = part.map(() => '?').join(', ');
        await conn.query(
          `UPDATE ${t} FORCE INDEX (PRIMARY) SET due_at = UTC_TIMESTAMP(6) + INTERVAL 30 SECOND, attempt = attempt + 1, token = ?, ready_priority = 0, phase = 2 WHERE id IN (${list})`,
          [c + 1, ...part],
        );
        await conn.query(`DELETE FROM ${t} WHERE id IN (${list})`, part);
        done += part.length;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  await conns[0]!.query(`DELETE FROM ${t} WHERE queue = ?`, [name]);
  await Promise.all(conns.map((c) => c.end()));
  return { rate: done / seconds, capped: done < ids.length };
}
