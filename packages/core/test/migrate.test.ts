import { describe, expect, it } from 'vitest';
import { ROUTINES } from '../src/queue/procedures.js';
import { routineStatements } from '../src/queue/routines/index.js';
import { withHash } from '../src/queue/routines/install.js';
import { MIGRATIONS } from '../src/schema/migrations.js';
import { migrationSteps, schemaSql } from '../src/schema/migrate.js';

describe('schema', () => {
  it('is one baseline of tables and indexes: no stored procedure is a schema version', () => {
    expect(MIGRATIONS.map((m) => [m.version, m.name])).toEqual([[1, 'baseline']]);
    const ddl = migrationSteps('t_').flatMap((s) => s.change);
    expect(ddl.every((sql) => sql.startsWith('CREATE TABLE IF NOT EXISTS `t_'))).toBe(true);
    expect(ddl.length).toBe(19);
  });

  it('schemaSql lists the procedures of the server family it is given, once each, between DELIMITER lines', () => {
    expect(schemaSql('t_')).not.toContain('CREATE PROCEDURE');
    expect(() => schemaSql('t_', 'postgres' as 'mysql')).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('"postgres"') }),
    );
    for (const engine of ['mysql', 'mariadb'] as const) {
      const sql = schemaSql('t_', engine);
      expect(sql.match(/CREATE PROCEDURE/g)?.length).toBe(ROUTINES.length);
      expect(sql.match(/^DELIMITER \/\/$/gm)?.length).toBe(ROUTINES.length);
    }
  });
});

describe('routines', () => {
  it('carry the hash of their text in their comment: the same text the same hash, another text another', () => {
    const a = withHash("CREATE PROCEDURE p() COMMENT 'taskrow: x' BEGIN END");
    expect(a.sql).toBe(`CREATE PROCEDURE p() COMMENT 'taskrow ${a.hash}: x' BEGIN END`);
    expect(withHash("CREATE PROCEDURE p() COMMENT 'taskrow: x' BEGIN END").hash).toBe(a.hash);
    expect(withHash("CREATE PROCEDURE p() COMMENT 'taskrow: x' BEGIN SELECT 1; END").hash).not.toBe(a.hash);
    expect(() => withHash('CREATE PROCEDURE p() BEGIN END')).toThrow(/COMMENT/);
  });

  it('are built for each server family without asking the server which it is', () => {
    const mysql = routineStatements(ROUTINES, 't_', 'mysql');
    const mariadb = routineStatements(ROUTINES, 't_', 'mariadb');
    expect(mysql.map((r) => r.name)).toEqual(mariadb.map((r) => r.name));
    expect(new Set(mysql.map((r) => r.name)).size).toBe(ROUTINES.length);
    for (const r of [...mysql, ...mariadb]) expect(r.sql).not.toMatch(/VERSION\(\)/);
    // The due read goes the way each server stops at the end of an index range.
    expect(mysql.find((r) => r.name === 't_claim_jobs')!.sql).not.toContain('`due_at` DESC');
    expect(mariadb.find((r) => r.name === 't_claim_jobs')!.sql).toContain('`due_at` DESC');
  });
});
