import { describe, expect, it } from 'vitest';
import { boundedSelect, dialectFromVersion, isTiDB, lockingWithPlainReads, valuesTable } from '../src/dialect.js';
import { TaskrowError } from '../src/errors.js';

describe('dialect', () => {
  it('reads engine and version from VERSION() strings', () => {
    const my = dialectFromVersion('9.7.4-2', 67108864);
    expect(my).toEqual({
      engine: 'mysql',
      version: '9.7.4',
      versionString: '9.7.4-2',
      maxAllowedPacket: 67108864,
      multiWriter: false,
      plainReadFirst: false,
      insertReturning: false,
      rangeEndStops: 'ascending',
      snapshotCheckedLocks: false,
      lockingReadsAlone: false,
    });
    const ma = dialectFromVersion('10.11.19-MariaDB-0+deb12u1', 16777216);
    expect([ma.engine, ma.version, ma.maxAllowedPacket, ma.plainReadFirst, ma.insertReturning, ma.rangeEndStops]).toEqual([
      'mariadb',
      '10.11.19',
      16777216,
      true,
      true,
      'descending',
    ]);
    expect(Object.isFrozen(ma)).toBe(true);
    // MySQL has no innodb_snapshot_isolation, whatever the caller read.
    expect([
      ma.snapshotCheckedLocks,
      dialectFromVersion('10.11.19-MariaDB', 1, '', false, true).snapshotCheckedLocks,
      dialectFromVersion('9.7.4', 1, '', false, true).snapshotCheckedLocks,
    ]).toEqual([false, true, false]);
    // Claims read their gate apart on MySQL nodes of multi-writer clusters only (Group Replication multi-primary).
    expect([
      dialectFromVersion('9.7.4', 1, '', true).lockingReadsAlone,
      dialectFromVersion('10.11.19-MariaDB', 1, '', true).lockingReadsAlone,
      ma.lockingReadsAlone,
    ]).toEqual([true, false, false]);
  });

  it("writes a table value constructor in each engine's form", () => {
    expect(valuesTable({ engine: 'mysql' }, ["(1, X'61')", '(2, NULL)'])).toBe("VALUES ROW(1, X'61'), ROW(2, NULL)");
    expect(valuesTable({ engine: 'mariadb' }, ["(1, X'61')", '(2, NULL)'])).toBe("VALUES (1, X'61'), (2, NULL)");
    expect(valuesTable({ engine: 'mysql' }, ['(3)'])).toBe('VALUES ROW(3)');
  });

  it('sends a locking read with plain reads in it with snapshot isolation off for that statement where the server has it', () => {
    const select = 'SELECT 1 FROM t WHERE NOT EXISTS (SELECT 1 FROM u) FOR UPDATE SKIP LOCKED';
    expect(lockingWithPlainReads({ snapshotCheckedLocks: true }, select)).toBe(`SET STATEMENT innodb_snapshot_isolation = OFF FOR ${select}`);
    expect(lockingWithPlainReads({ snapshotCheckedLocks: false }, select)).toBe(select);
  });

  it('fails loudly on servers older than MySQL 8.0.19 or MariaDB 10.6, naming the version, what it lacks and what is needed', () => {
    for (const [v, lacks, need] of [
      ['5.7.44-log', 'SKIP LOCKED', 'MySQL 8.0.19'],
      ['8.0.0-dmr', 'SKIP LOCKED', 'MySQL 8.0.19'],
      ['8.0.18', 'VALUES ROW', 'MySQL 8.0.19'],
      ['10.5.23-MariaDB', 'SKIP LOCKED', 'MariaDB 10.6'],
      ['5.5.5-10.4.32-MariaDB', 'SKIP LOCKED', 'MariaDB 10.6'],
    ] as const) {
      let err: unknown;
      try {
        dialectFromVersion(v, 1 << 24);
      } catch (e) {
        err = e;
      }
      expect(err, v).toBeInstanceOf(TaskrowError);
      expect((err as TaskrowError).code).toBe('UNSUPPORTED_SERVER');
      expect((err as TaskrowError).message).toContain(v);
      expect((err as TaskrowError).message).toContain(lacks);
      expect((err as TaskrowError).message).toContain(need);
    }
    expect(dialectFromVersion('8.0.19', 1 << 24).engine).toBe('mysql');
    expect(dialectFromVersion('10.6.0-MariaDB', 1 << 24).engine).toBe('mariadb');
    expect(dialectFromVersion('5.5.5-11.8.6-MariaDB', 1 << 24).version).toBe('11.8.6');
  });

  it('refuses TiDB, which accepts SKIP LOCKED without honouring it, by VERSION() or by @@version_comment', () => {
    for (const [v, comment] of [
      ['8.0.11-TiDB-v7.5.1', 'TiDB Server (Apache License 2.0) Community Edition, MySQL 8.0 compatible'],
      ['5.7.25-TiDB-v6.5.0', ''],
      ['8.0.11-TiDB-v7.1.0-serverless', ''],
      // TiDB's `server-version` setting can make VERSION() look like MySQL; the comment still names it.
      ['8.0.36', 'TiDB Server (Apache License 2.0) Enterprise Edition, MySQL 8.0 compatible'],
    ] as const) {
      let err: unknown;
      try {
        dialectFromVersion(v, 1 << 24, comment);
      } catch (e) {
        err = e;
      }
      expect(err, v).toBeInstanceOf(TaskrowError);
      expect((err as TaskrowError).code, v).toBe('UNSUPPORTED_SERVER');
      expect((err as TaskrowError).message).toContain('TiDB');
      expect((err as TaskrowError).message).toContain(v);
    }
    expect(isTiDB('9.7.4', 'MySQL Community Server - GPL')).toBe(false);
    expect(isTiDB('10.11.19-MariaDB-0+deb12u1', 'Debian 12')).toBe(false);
    expect(dialectFromVersion('8.4.3', 1 << 24, 'MySQL Community Server - GPL').engine).toBe('mysql');
  });

  it("bounds a SELECT with each engine's own time limit, in milliseconds", () => {
    const select = 'SELECT 1 FROM `t` WHERE `name` = ? FOR UPDATE';
    expect(boundedSelect({ engine: 'mysql' }, select, 1000)).toBe('SELECT /*+ MAX_EXECUTION_TIME(1000) */ 1 FROM `t` WHERE `name` = ? FOR UPDATE');
    expect(boundedSelect({ engine: 'mariadb' }, select, 250)).toBe('SET STATEMENT max_statement_time = 0.25 FOR SELECT 1 FROM `t` WHERE `name` = ? FOR UPDATE');
  });
});
