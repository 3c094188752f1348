import { result, varNumber, type DoctorContext } from './context.js';
import type { DoctorCheck } from './types.js';

/**
 * The `binlog` check. `binlog_format=STATEMENT` with the binary log on is a `fail`: MySQL and
 * MariaDB refuse InnoDB writes at READ COMMITTED then (error 1665), and taskrow's claims write at
 * READ COMMITTED (seen on MariaDB 10.11 and 11.8 and MySQL 9.7: every claim refused, enqueues
 * stored). `MIXED` and `ROW` are `ok`.
 */
export function binlogCheck(ctx: DoctorContext): DoctorCheck {
  const on = /^(on|1)$/i.test(ctx.vars.get('log_bin') ?? '');
  const format = (ctx.vars.get('binlog_format') ?? '').toUpperCase();
  const details = { logBin: on, binlogFormat: format || null };
  if (!on) return result('binlog', 'ok', `the binary log is off${format ? ` (binlog_format=${format} would apply when on)` : ''}`, undefined, details);
  if (format !== 'STATEMENT') return result('binlog', 'ok', `binary log on, binlog_format=${format || 'unknown'}`, undefined, details);
  const breaks = 'the server refuses InnoDB writes at READ COMMITTED (error 1665), so every claim fails (enqueues are stored, without ringing the doorbell)';
  const fix = 'SET GLOBAL binlog_format = ROW (or MIXED), and set it in the server configuration';
  return result('binlog', 'fail', `binlog_format=STATEMENT with the binary log on: ${breaks}`, fix, details);
}

/**
 * The `isolation` check: the default transaction isolation. taskrow sets its own level per
 * transaction, so the default matters only inside `tr.in(tx)`, where the application's applies:
 * READ COMMITTED and REPEATABLE READ are `ok`, the others `warn`.
 */
export function isolationCheck(ctx: DoctorContext): DoctorCheck {
  const level = (ctx.vars.get('transaction_isolation') ?? ctx.vars.get('tx_isolation') ?? '').toUpperCase().replace('-', ' ');
  const details = { isolation: level || null };
  if (level === 'READ COMMITTED' || level === 'REPEATABLE READ') {
    return result('isolation', 'ok', `${level}; taskrow sets its own level per transaction, yours applies inside tr.in(tx)`, undefined, details);
  }
  const why =
    level === 'SERIALIZABLE'
      ? 'inside tr.in(tx) claims and marks then wait on locks that plain reads take (and Group Replication multi-primary rejects it)'
      : 'inside tr.in(tx) reads see uncommitted rows';
  return result(
    'isolation',
    'warn',
    `default isolation ${level || 'unknown'}: ${why}`,
    'SET GLOBAL transaction_isolation = READ-COMMITTED (or REPEATABLE-READ)',
    details,
  );
}

/**
 * The `timeouts` check: `innodb_lock_wait_timeout` against taskrow's statement timeout (a lock
 * wait longer than it is abandoned as a lost connection and retried, instead of ending as error
 * 1205), and `wait_timeout`: below a minute it closes idle pooled connections often, `warn`.
 */
export function timeoutsCheck(ctx: DoctorContext): DoctorCheck {
  const lockWait = varNumber(ctx, 'innodb_lock_wait_timeout');
  const idle = varNumber(ctx, 'wait_timeout');
  const statement = ctx.statementTimeoutMs / 1000;
  const details = { innodbLockWaitTimeout: lockWait ?? null, waitTimeout: idle ?? null, statementTimeout: statement };
  const longer = lockWait !== undefined && lockWait >= statement ? ` (a lock wait past ${statement} s is abandoned as a lost connection and retried)` : '';
  const summary = `innodb_lock_wait_timeout=${lockWait ?? '?'} s${longer}, wait_timeout=${idle ?? '?'} s, taskrow's statementTimeout=${statement} s`;
  if (idle === undefined || idle >= 60) return result('timeouts', 'ok', summary, undefined, details);
  const problem = `wait_timeout=${idle} s closes idle pooled connections: taskrow retries each lost one, at the cost of a retry`;
  return result('timeouts', 'warn', `${summary}; ${problem}`, "SET GLOBAL wait_timeout = 28800, or keep the pool's idle timeout below it", details);
}
