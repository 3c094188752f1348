import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { taskrow } from './run.js';

for (const target of inject('targets')) {
  describe(`taskrow doctor against ${target.engine} ${target.version}`, () => {
    const prefix = `cdr${process.pid}${target.engine.slice(0, 2)}${target.version.replace(/\D/g, '').slice(0, 4)}_`;
    const env = { TASKROW_URL: target.url };
    const common = ['--prefix', prefix];
    let probe: mysql.Connection;
    beforeAll(async () => {
      probe = await mysql.createConnection(target.url);
      expect((await taskrow(['migrate', ...common], { env })).code).toBe(0);
    });
    afterAll(async () => {
      const [tables] = await probe.query<mysql.RowDataPacket[]>(
        'SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?',
        [`${prefix}%`],
      );
      for (const r of tables) await probe.query(`DROP TABLE \`${r['t']}\``);
      const [procs] = await probe.query<mysql.RowDataPacket[]>(
        'SELECT routine_name AS r FROM information_schema.routines WHERE routine_schema = DATABASE() AND routine_name LIKE ?',
        [`${prefix}%`],
      );
      for (const r of procs) await probe.query(`DROP PROCEDURE \`${r['r']}\``);
      await probe.end();
    });

    it('prints one line per check with an indented fix, and exits 0 when nothing failed', async () => {
      const r = await taskrow(['doctor', ...common], { env });
      expect([r.code, r.stderr]).toEqual([0, '']);
      const lines = r.stdout.trimEnd().split('\n');
      expect(lines.every((l) => /^(OK|WARN|FAIL|SKIP) +[a-z-]+ {2,}\S/.test(l) || /^ {6}fix: \S/.test(l))).toBe(true);
      expect(lines).toContainEqual(expect.stringMatching(/^OK +procedures +all 5 stored procedures are current: the fast path is on$/));
      expect(lines).toContainEqual(expect.stringMatching(/^OK +schema +schema version \d+, this build's$/));
      expect(lines.filter((l) => /^(OK|WARN|FAIL|SKIP) /.test(l))).toHaveLength(13);
    });

    it('names a dropped procedure with its fix, prints the report as JSON with --json, and exits 1 on a failed check', async () => {
      await probe.query(`DROP PROCEDURE \`${prefix}claim_jobs\``);
      const r = await taskrow(['doctor', ...common], { env });
      expect(r.code).toBe(0); // a warning is no failure
      const at = r.stdout.split('\n').findIndex((l) => /^WARN +procedures /.test(l));
      expect(r.stdout.split('\n')[at]).toContain(`${prefix}claim_jobs missing: a claim runs statement by statement`);
      expect(r.stdout.split('\n')[at + 1]).toMatch(/^ {6}fix: run migrate\(\) \(taskrow migrate\) as a user granted CREATE ROUTINE/);
      const json = await taskrow(['doctor', '--json', ...common], { env });
      const report = JSON.parse(json.stdout) as { checks: { id: string; status: string; details?: { missing?: string[] } }[] };
      expect(report.checks.find((c) => c.id === 'procedures')).toMatchObject({ status: 'warn', details: { missing: [`${prefix}claim_jobs`] } });
      expect((await taskrow(['migrate', ...common], { env })).code).toBe(0);
      expect((await taskrow(['doctor', ...common], { env })).stdout).toMatch(/^OK +procedures /m);
      const fresh = await taskrow(['doctor', '--prefix', `${prefix}x_`], { env });
      expect(fresh.code).toBe(1);
      expect(fresh.stdout).toMatch(/^FAIL +schema +no taskrow tables under prefix "[^"]+"\n {6}fix: run migrate\(\) \(taskrow migrate\)$/m);
    });

    it('refuses arguments with exit 2', async () => {
      const r = await taskrow(['doctor', 'extra', ...common], { env });
      expect([r.code, r.stderr.split('\n')[0]]).toEqual([2, 'taskrow: doctor takes no arguments, got "extra"']);
    });
  });
}
