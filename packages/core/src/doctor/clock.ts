import { toNumber } from '../validate.js';
import { result, type DoctorContext } from './context.js';
import type { DoctorCheck } from './types.js';

/** Milliseconds of skew, beyond the round trip, past which the check warns. */
const SKEW_WARN_MS = 3000;
/** Reads of the server's clock; the one with the shortest round trip counts. */
const SAMPLES = 3;

/** One reading: the server's clock minus the client's at the middle of the round trip, and the round trip. */
async function sample(ctx: DoctorContext): Promise<{ skewMs: number; rttMs: number }> {
  const sent = Date.now();
  const { rows } = await ctx.exec.query<{ us: unknown }>("SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) AS us");
  const back = Date.now();
  return { skewMs: toNumber(rows[0]?.us) / 1000 - (sent + back) / 2, rttMs: back - sent };
}

/**
 * The `clock` check: the server's UTC clock against this process's `Date.now()`, with half the
 * round trip as the margin; `warn` when they differ by more than 3 s beyond it. Leases, delays
 * and schedules run on the database clock, so skew does not break them. Read-only.
 */
export async function clockCheck(ctx: DoctorContext): Promise<DoctorCheck> {
  let best = await sample(ctx);
  for (let i = 1; i < SAMPLES; i++) {
    const next = await sample(ctx);
    if (next.rttMs < best.rttMs) best = next;
  }
  const skew = Math.round(best.skewMs);
  const margin = Math.ceil(best.rttMs / 2);
  const details = { skewMs: skew, marginMs: margin };
  const summary = `server clock ${skew >= 0 ? 'ahead of' : 'behind'} this client's by ${Math.abs(skew)} ms (± ${margin} ms)`;
  if (Math.abs(skew) - margin <= SKEW_WARN_MS)
    return result('clock', 'ok', `${summary}; leases, delays and schedules use the database clock`, undefined, details);
  const affects =
    "leases, delays and schedules use the database clock and are unaffected; a runAt computed from this client's clock, and ages your code computes from job timestamps, are off by the skew";
  return result('clock', 'warn', `${summary}: ${affects}`, 'synchronise both machines with NTP (chrony, systemd-timesyncd)', details);
}
