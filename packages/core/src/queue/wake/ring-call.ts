import type { Executor } from '../../engine/executor.js';
import { toNumber } from '../../validate.js';
import { callProcedure, mayCall } from '../routines/call.js';
import type { QueueTables } from '../model/tables.js';
import type { Routine } from '../routines/routine.js';

/**
 * A ring's count on the queue's guard row, written once for the client's ring (`ring.ts`) and the
 * procedures that ring (`ring_sleepers`, `enqueue_job_and_hand`): it locks the row until the
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

/**
 * A ring of the doorbell (see `doorbell.ts`, `ring.ts`) as one statement,
 * `CALL <prefix>ring_sleepers(queue, max)`. The procedure runs the ring's transaction in the
 * server, in the order the client would send it: at READ UNCOMMITTED, count the ring on the queue's
 * guard row (which locks it until the commit), read up to `max` registrations, `KILL QUERY` each
 * (one whose thread ended meanwhile, error 1094, is skipped), commit; it returns how many it found
 * (-1: the queue has no guard row). One round trip instead of six, on the path from an enqueue's
 * commit to the sleeper's wake. Any error rolls the transaction back and reaches the client (a
 * `KILL` the server denies, 1095, among them). `SQL SECURITY INVOKER`: the caller's `KILL`
 * privileges decide, as for a ring sent statement by statement.
 */
export const RING_SLEEPERS_ROUTINE: Routine = {
  name: (t) => t.ringCall,
  create: (t) => `CREATE PROCEDURE ${t.ringCall}(IN p_queue VARCHAR(64) CHARACTER SET ascii, IN p_max INT UNSIGNED)
MODIFIES SQL DATA SQL SECURITY INVOKER COMMENT 'taskrow: one ring of the doorbell of a queue'
BEGIN
  DECLARE v_conn BIGINT UNSIGNED;
  DECLARE v_found INT DEFAULT -1;
  DECLARE v_done TINYINT DEFAULT 0;
  DECLARE c_sleepers CURSOR FOR ${sleepersSql(t, 'p_queue', 'p_max')};
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = 1;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED;
  START TRANSACTION;
  ${countRingSql(t, 'p_queue')};
  IF ROW_COUNT() > 0 THEN
    SET v_found = 0;
${KILL_SLEEPERS}  END IF;
  COMMIT;
  SELECT v_found AS \`found\`;
END`,
};

/**
 * One ring of `queue`'s sleepers, up to `max`, in one statement (see `RING_SLEEPERS_ROUTINE`):
 * resolves to the number found (-1: no guard row), or undefined, having run nothing, when it cannot
 * be called (`mayCall`; a server that refused the procedure, a user
 * without `EXECUTE`): the caller rings in a transaction. `exec` bounds it as it bounds the ring.
 */
export async function ringByCall(exec: Executor, t: QueueTables, queue: string, max: number): Promise<number | undefined> {
  if (!mayCall(exec, t.ringCall)) return undefined;
  const got = await callProcedure<{ found?: unknown }>(exec, t.ringCall, [queue, max]);
  return got === undefined ? undefined : toNumber(got.found);
}
