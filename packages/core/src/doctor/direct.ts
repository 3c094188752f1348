import { performance } from 'node:perf_hooks';
import { toNumber } from '../validate.js';
import { errnoOf, result, type DoctorContext } from './context.js';
import type { DoctorCheck } from './types.js';

/** Seconds the test sleep lasts. */
const SLEEP_SECONDS = 2;
/** Milliseconds within which an interrupted sleep must end for the connection to count as direct. */
const INTERRUPT_MS = 1000;
/** The alias that marks the test sleep in the process list. */
const MARK = 'taskrow_doctor_sleep';
/** MariaDB's "Query execution was interrupted"; MySQL's `SLEEP` returns 1 instead. */
const ER_QUERY_INTERRUPTED = 1317;

/** The sleeping side: one connection reports its id, then sleeps; resolves to when the sleep ended (`performance.now()`). */
function sleeper(ctx: DoctorContext, onId: (id: number) => void): Promise<number> {
  return ctx.exec.within((SLEEP_SECONDS + 5) * 1000).transaction(async (conn) => {
    const { rows } = await conn.query<{ id: unknown }>('SELECT CONNECTION_ID() AS id');
    onId(toNumber(rows[0]?.id));
    try {
      await conn.query(`SELECT SLEEP(${SLEEP_SECONDS}) AS ${MARK}`);
    } catch (err) {
      if (errnoOf(ctx, err) !== ER_QUERY_INTERRUPTED) throw err;
    }
    return performance.now();
  });
}

/** Whether the server's process list shows connection `id` running the test sleep: polled for up to a second, `ended` once the sleep ended first. */
async function shown(ctx: DoctorContext, id: number, ended: () => boolean): Promise<'shown' | 'not shown' | 'ended'> {
  for (const until = performance.now() + 1000; performance.now() < until; ) {
    const { rows } = await ctx.exec.query<{ n: unknown }>('SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID = ? AND INFO LIKE ?', [
      id,
      `SELECT SLEEP(%) AS ${MARK}`,
    ]);
    if (ended()) return 'ended';
    if (toNumber(rows[0]?.n) > 0) return 'shown';
    await new Promise((r) => setTimeout(r, 50));
  }
  return 'not shown';
}

/**
 * The `direct-connection` check, for the doorbell (which wakes a sleeping connection with
 * `KILL QUERY <its id>`): one connection reports `CONNECTION_ID()` and runs `SELECT SLEEP(2)`;
 * another, once the server's process list shows that id running that very sleep, sends
 * `KILL QUERY` for it. Direct when the sleep ends within a second. MUST NOT send a `KILL` for an
 * id the process list does not show running the check's own sleep (behind a proxy that maps
 * ids, that id may be another client's). Needs two connections at once. Changes nothing in the
 * database.
 */
export async function directConnectionCheck(ctx: DoctorContext): Promise<DoctorCheck> {
  let ended = false;
  let report: (id: number) => void = () => undefined;
  const known = new Promise<number>((resolve) => (report = resolve));
  const sleep = sleeper(ctx, (id) => report(id)).finally(() => (ended = true));
  try {
    const id = await Promise.race([known, sleep.then(() => Number.NaN)]);
    const seen = Number.isSafeInteger(id) ? await shown(ctx, id, () => ended) : 'ended';
    if (seen === 'ended') {
      return result(
        'direct-connection',
        'skipped',
        "the client lent no second connection while one slept (a pool of one connection?), so the doorbell's KILL could not be tried",
      );
    }
    if (seen === 'not shown') {
      const summary = `the server shows no connection ${id} running this check's sleep: a proxy between client and server maps or pools connections, so the doorbell's KILL QUERY cannot reach a sleeper`;
      return result('direct-connection', 'warn', summary, 'leave the doorbell off (work() without doorbell: true), or connect workers and enqueuers directly', {
        connectionId: id,
      });
    }
    return await interrupt(ctx, id, sleep);
  } finally {
    await sleep.catch(() => undefined);
  }
}

/** Sends `KILL QUERY id` and times how soon the sleep of connection `id` (`sleep`) ends. */
async function interrupt(ctx: DoctorContext, id: number, sleep: Promise<number>): Promise<DoctorCheck> {
  const sent = performance.now();
  try {
    await ctx.exec.query(`KILL QUERY ${id}`);
  } catch (err) {
    const summary = `KILL QUERY ${id} was refused (errno ${errnoOf(ctx, err) ?? '?'}): the doorbell cannot wake sleepers from this client`;
    return result('direct-connection', 'warn', summary, 'leave the doorbell off, or connect directly as the same user', { connectionId: id });
  }
  const ms = Math.max(0, Math.round((await sleep) - sent));
  const details = { connectionId: id, interruptedInMs: ms };
  if (ms <= INTERRUPT_MS)
    return result(
      'direct-connection',
      'ok',
      `KILL QUERY interrupted a sleeping connection in ${ms} ms: connections are direct, the doorbell works`,
      undefined,
      details,
    );
  const summary = `KILL QUERY ${id} did not interrupt the sleeping connection (it ended after ${ms} ms): something between client and server keeps the doorbell from working`;
  return result('direct-connection', 'warn', summary, 'leave the doorbell off (work() without doorbell: true)', details);
}
