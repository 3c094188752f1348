import { describe, expect, it } from 'vitest';
import type { DoctorCheck, DoctorReport } from '@taskrow/core';
import { dropPrefix, freshName } from '@taskrow/core/conformance';
import { taskrow } from '@taskrow/mysql2';
import mysql from 'mysql2/promise';
import { useMigratedPool } from '../../src/setup.js';
import { label, targets } from '../../src/targets.js';

const IDS = [
  'server',
  'schema',
  'privileges',
  'procedures',
  'binlog',
  'isolation',
  'timeouts',
  'connections',
  'performance-schema',
  'clock',
  'direct-connection',
  'purge-lag',
  'table-sizes',
];

/** The check `id` of `report`; throws when it is missing. */
function check(report: DoctorReport, id: string): DoctorCheck {
  const c = report.checks.find((x) => x.id === id);
  if (!c) throw new Error(`no check ${id} in ${JSON.stringify(report)}`);
  return c;
}

for (const target of targets()) {
  describe(`${label(target)} · mysql2 · doctor`, () => {
    const m = useMigratedPool(target, { prefix: `${freshName('d')}_` });
    const db = new URL(target.url).pathname.slice(1);

    /** What the doctor must not change: the prefix's tables, procedures (with their comments) and recorded versions. */
    const footprint = async (): Promise<unknown[]> => [
      await m.probe.query(
        'SELECT TABLE_NAME AS t, CREATE_TIME AS c FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE ? ORDER BY t',
        [`${m.prefix}%`],
      ),
      await m.probe.query(
        'SELECT ROUTINE_NAME AS r, ROUTINE_COMMENT AS c, LAST_ALTERED AS a FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME LIKE ? ORDER BY r',
        [`${m.prefix}%`],
      ),
      await m.probe.query(`SELECT version, applied_at FROM \`${m.prefix}schema_migrations\` ORDER BY version`),
    ];

    it('reports a migrated prefix: every check in order, schema and procedures current, the connection direct, nothing failed, nothing changed', async () => {
      const before = await footprint();
      const report = await m.tr.doctor();
      expect(report.checks.map((c) => c.id)).toEqual(IDS);
      expect(check(report, 'procedures')).toMatchObject({ status: 'ok', details: { missing: [], outdated: [], current: 5 } });
      expect(check(report, 'procedures').summary).toContain('the fast path is on');
      expect(check(report, 'schema').status).toBe('ok');
      expect(check(report, 'privileges').status).toBe('ok');
      expect(check(report, 'direct-connection').status).toBe('ok');
      expect(check(report, 'server').details).toMatchObject({ engine: target.engine });
      expect(report.checks.filter((c) => c.status === 'fail')).toEqual([]);
      expect(await footprint()).toEqual(before);
    });

    it('names a dropped procedure and the path that then runs statement by statement; after migrate() it is current again', async () => {
      await m.probe.query(`DROP PROCEDURE \`${m.prefix}claim_jobs\``);
      const dropped = check(await m.tr.doctor(), 'procedures');
      expect(dropped.status).toBe('warn');
      expect(dropped.details).toMatchObject({ missing: [`${m.prefix}claim_jobs`], outdated: [], current: 4 });
      expect(dropped.summary).toContain(`${m.prefix}claim_jobs missing: a claim runs statement by statement`);
      expect(dropped.fix).toContain('CREATE ROUTINE, ALTER ROUTINE and EXECUTE');
      await m.probe.query(`ALTER PROCEDURE \`${m.prefix}enqueue_jobs\` COMMENT 'taskrow 0123456789abcdef: an older build'`);
      expect(check(await m.tr.doctor(), 'procedures').details).toMatchObject({ missing: [`${m.prefix}claim_jobs`], outdated: [`${m.prefix}enqueue_jobs`] });
      await m.tr.migrate();
      expect(check(await m.tr.doctor(), 'procedures')).toMatchObject({ status: 'ok', details: { missing: [], outdated: [] } });
    });

    it('tells a user without CREATE ROUTINE which privileges each feature lacks, and the GRANT that adds them', async () => {
      const user = `tr_${freshName('u')}`.slice(0, 32);
      await m.probe.query(`CREATE USER '${user}'@'%' IDENTIFIED BY 'pw'`);
      await m.probe.query(`GRANT SELECT, INSERT, UPDATE, DELETE, CREATE ON \`${db}\`.* TO '${user}'@'%'`);
      const url = new URL(target.url);
      [url.username, url.password] = [user, 'pw'];
      const pool = mysql.createPool({ uri: url.toString(), connectionLimit: 2 });
      try {
        const report = await (await taskrow(pool, { prefix: m.prefix })).doctor();
        const privileges = check(report, 'privileges');
        expect(privileges.status).toBe('warn');
        expect(privileges.summary).toContain('CREATE ROUTINE, ALTER ROUTINE (installing stored procedures with migrate())');
        expect(privileges.summary).toContain('EXECUTE (running the stored procedures)');
        expect(privileges.fix).toBe(`GRANT CREATE ROUTINE, ALTER ROUTINE, EXECUTE ON \`${db}\`.* TO '${user}'@'%'; then run migrate() (taskrow migrate)`);
        expect(check(report, 'purge-lag').status).toBe('skipped'); // no PROCESS
        expect(check(report, 'schema').status).toBe('ok');
      } finally {
        await pool.end();
        await m.probe.query(`DROP USER '${user}'@'%'`);
      }
    });

    it('warns when a newer build recorded a schema version this build does not know', async () => {
      const pool = mysql.createPool({ uri: target.url, connectionLimit: 2 });
      const prefix = `${freshName('new')}_`;
      try {
        const tr = await taskrow(pool, { prefix });
        const { version } = await tr.migrate();
        await m.probe.query(`INSERT INTO \`${prefix}schema_migrations\` (version, name, applied_at) VALUES (?, 'from_a_newer_build', UTC_TIMESTAMP(6))`, [
          version + 1,
        ]);
        expect(check(await tr.doctor(), 'schema')).toMatchObject({ status: 'warn', details: { stored: version + 1, build: version } });
      } finally {
        await dropPrefix(m.probe, prefix);
        await pool.end();
      }
    });

    it('fails the schema check of a prefix never migrated, and says so without throwing', async () => {
      const pool = mysql.createPool({ uri: target.url, connectionLimit: 2 });
      try {
        const prefix = `${freshName('none')}_`;
        const report = await (await taskrow(pool, { prefix })).doctor();
        expect(check(report, 'schema')).toMatchObject({ status: 'fail', fix: 'run migrate() (taskrow migrate)' });
        expect(check(report, 'procedures').summary).toMatch(/^none of the 5 stored procedures is installed or visible to this user/);
        expect(check(report, 'table-sizes').status).toBe('skipped');
      } finally {
        await pool.end();
      }
    });
  });
}
