import type { QueueTables } from '../model/tables.js';

/**
 * A ring's count on the queue's guard row, written once for the client's ring (`ring.ts`) and the
 * hand-off procedure (`enqueue_job_and_hand`): it locks the row until the
 * commit, and tells a sleeper that a ring came (see `doorbell.ts`). It matches no row when the
 * queue has no guard row. `queue` is SQL: `?` in a client's statement, `p_queue` in a routine.
 */
export const countRingSql = (t: QueueTables, queue: string): string =>
  `UPDATE ${t.sleepers} SET \`rings\` = \`rings\` + 1 WHERE \`queue\` = ${queue} AND \`conn\` = 0`;

/**
 * The read of up to `limit` registrations of `queue`'s sleepers (their connection ids; a ring
 * reads them uncommitted, as no registration is ever committed), those for which `first` is true
 * first when given. SQL each, as in `countRingSql`.
 */
export const sleepersSql = (t: QueueTables, queue: string, limit: string, first?: string): string =>
  `SELECT \`conn\` FROM ${t.sleepers} WHERE \`queue\` = ${queue} AND \`conn\` > 0${first === undefined ? '' : ` ORDER BY ${first} DESC`} LIMIT ${limit}`;

/**
 * A ring's `KILL QUERY` of each registration cursor `c_sleepers` reads (`v_conn`), counted in
 * `v_found`; one whose thread ended meanwhile (error 1094) is skipped. Needs `v_done` set by the
 * cursor's NOT FOUND handler.
 */
export const KILL_SLEEPERS = `    OPEN c_sleepers;
    sleepers: LOOP
      FETCH c_sleepers INTO v_conn;
      IF v_done = 1 THEN LEAVE sleepers; END IF;
      SET v_found = v_found + 1;
      BEGIN
        DECLARE CONTINUE HANDLER FOR 1094 BEGIN END;
        KILL QUERY v_conn;
      END;
    END LOOP;
    CLOSE c_sleepers;
`;
