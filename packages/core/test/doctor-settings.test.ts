import { describe, expect, it } from 'vitest';
import { dialectFromVersion } from '../src/dialect.js';
import type { DoctorContext } from '../src/doctor/context.js';
import { binlogCheck, isolationCheck, timeoutsCheck } from '../src/doctor/settings.js';
import { Executor } from '../src/engine/executor.js';
import type { SqlClient } from '../src/port.js';

/** A context over `vars` on `version`; no statement is sent (the checks read only the variables). */
function ctx(vars: Record<string, string>, version = '8.0.36'): DoctorContext {
  const exec = new Executor({} as SqlClient, dialectFromVersion(version, 64 << 20));
  return { exec, prefix: 'taskrow_', vars: new Map(Object.entries(vars)), statementTimeoutMs: 30_000 };
}

describe('doctor: server settings read from variables', () => {
  it('fails binlog_format=STATEMENT with the binary log on (claims refused with 1665), on both server families; ROW, MIXED and a log off are ok', () => {
    for (const version of ['8.0.36', '10.11.19-MariaDB']) {
      const c = binlogCheck(ctx({ log_bin: 'ON', binlog_format: 'STATEMENT' }, version));
      expect(c.status).toBe('fail');
      expect(c.summary).toContain('error 1665');
      expect(c.fix).toContain('binlog_format = ROW');
    }
    expect(binlogCheck(ctx({ log_bin: 'OFF', binlog_format: 'STATEMENT' })).status).toBe('ok');
    expect(binlogCheck(ctx({ log_bin: 'ON', binlog_format: 'MIXED' })).status).toBe('ok');
  });

  it("warns of a SERIALIZABLE default (MariaDB's tx_isolation too) and of a wait_timeout under a minute", () => {
    expect(isolationCheck(ctx({ transaction_isolation: 'READ-COMMITTED' })).status).toBe('ok');
    expect(isolationCheck(ctx({ tx_isolation: 'SERIALIZABLE' })).status).toBe('warn');
    expect(timeoutsCheck(ctx({ innodb_lock_wait_timeout: '50', wait_timeout: '28800' })).status).toBe('ok');
    expect(timeoutsCheck(ctx({ innodb_lock_wait_timeout: '50', wait_timeout: '10' }))).toMatchObject({
      status: 'warn',
      fix: expect.stringContaining('wait_timeout'),
    });
  });
});
