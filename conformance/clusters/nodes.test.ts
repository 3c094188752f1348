import mysql from 'mysql2/promise';
import { createTaskrow, type SqlClient, type SqlConnection } from '@taskrow/core';
import { dropPrefix } from '@taskrow/core/conformance';
import { mysql2Client, taskrow, type Mysql2Connection } from '@taskrow/mysql2';
import { describe, expect, it } from 'vitest';
import { clusters } from '../src/cluster-harness.js';
import { clusterProblems, on } from '../src/cluster-health.js';
import { mysql2Probe } from '../src/harnesses/mysql2.js';

// The clusters the kit runs on are real clusters: three server processes, each a member, and a
// row written on any writable node is read on every node (the run's read-your-writes setting).
for (const c of clusters()) {
  describe(`${c.kind} · nodes`, () => {
    it('has three nodes on three ports, each a member of one three-node cluster', async () => {
      expect(new Set(c.urls.map((u) => new URL(u).port)).size).toBe(3);
      // Galera: size 3, Synced, Primary on each node; Group Replication: three ONLINE members.
      expect(await clusterProblems(c)).toEqual([]);
      if (c.kind !== 'galera') {
        for (const url of c.urls) {
          const rows = await on(url, "SELECT COUNT(*) AS n FROM performance_schema.replication_group_members WHERE member_role = 'PRIMARY'");
          expect(Number(rows[0]!['n'])).toBe(c.kind === 'group-replication' ? 3 : 1);
        }
      }
    });

    it("taskrow's dialect reads every node as a multi-writer cluster node, except on single-primary", async () => {
      const seen: boolean[] = [];
      for (const url of c.urls) {
        const pool = mysql.createPool({ uri: url, connectionLimit: 1 });
        try {
          seen.push((await taskrow(pool, { prefix: 'nodes_' })).dialect.multiWriter);
        } finally {
          await pool.end();
        }
      }
      expect(seen).toEqual(c.urls.map(() => c.kind !== 'group-replication-single-primary'));
    });

    // Group Replication multi-primary (MySQL 9.7.4) crashed in two of five cluster runs while
    // running a claim's locking read with the gate's plain reads in it (Dialect.lockingReadsAlone).
    if (c.kind === 'group-replication')
      it('a claim on a multi-primary node reads its gate by a statement of its own: its locking read has no subquery, and a paused queue still gives nothing', async () => {
        const pool = mysql.createPool({ uri: c.urls[0]!, connectionLimit: 2 });
        const inner = mysql2Client(pool);
        const sent: string[] = [];
        const watched = (conn: SqlConnection): SqlConnection => ({ query: (sql, params) => (sent.push(sql), conn.query(sql, params)) });
        const client: SqlClient = {
          adapter: inner.adapter,
          joined: false,
          describeError: (err) => inner.describeError(err),
          query: (sql, params, options) => (sent.push(sql), inner.query(sql, params, options)),
          transaction: (fn, options) => inner.transaction((conn) => fn(watched(conn)), options),
        };
        const prefix = `gate${process.pid.toString(36)}_`;
        const tr = await createTaskrow<Mysql2Connection>({ client, joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } });
        try {
          await tr.migrate();
          const q = tr.queue('g');
          await q.enqueueMany([{ payload: 1 }, { payload: 2 }, { payload: 3 }]);
          const from = sent.length;
          expect((await q.claim({ limit: 2, lease: 30_000 })).map((j) => j.payload)).toEqual([1, 2]);
          const reads = sent.slice(from).filter((sql) => /FOR UPDATE SKIP LOCKED/.test(sql));
          expect(reads.length).toBeGreaterThan(0);
          expect(reads.filter((sql) => /EXISTS/.test(sql))).toEqual([]);
          expect(sent.slice(from).some((sql) => /paused_at/.test(sql) && !/FOR UPDATE/.test(sql))).toBe(true);
          await q.pause();
          expect(await q.claim({ limit: 2, lease: 30_000 })).toEqual([]);
          await q.resume();
          expect((await q.claim({ limit: 2, lease: 30_000 })).map((j) => j.payload)).toEqual([3]);
        } finally {
          const probe = await mysql2Probe(c.urls[0]!);
          await dropPrefix(probe, prefix).finally(() => probe.end());
          await pool.end();
        }
      });

    it('reads on every node a row just written on any writable node', async () => {
      const table = `nodes_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
      const writers = c.kind === 'group-replication-single-primary' ? c.urls.slice(0, 1) : c.urls;
      await on(c.urls[0]!, `CREATE TABLE \`${table}\` (id INT PRIMARY KEY, node INT NOT NULL) ENGINE=InnoDB`);
      try {
        for (const [i, url] of writers.entries()) {
          await on(url, `INSERT INTO \`${table}\` VALUES (?, ?)`, [i, i]);
          for (const reader of c.urls) expect((await on(reader, `SELECT node FROM \`${table}\` WHERE id = ?`, [i])).map((r) => r['node'])).toEqual([i]);
        }
      } finally {
        await on(c.urls[0]!, `DROP TABLE IF EXISTS \`${table}\``);
      }
    });

    // What the kit's cases about row locks between sessions cannot assume across nodes (they run on
    // one node there: HarnessOpenOptions.oneNode), stated as a test so the docs stay true.
    // Single-primary has one writable node: nothing to compare.
    if (c.kind !== 'group-replication-single-primary')
      it('a row lock held on one node is neither waited on nor skipped by SKIP LOCKED on another', async () => {
        const table = `lk_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
        await on(c.urls[0]!, `CREATE TABLE \`${table}\` (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB`);
        await on(c.urls[0]!, `INSERT INTO \`${table}\` VALUES (1, 0), (2, 0)`);
        const [holder, other] = await Promise.all([mysql.createConnection(c.urls[0]!), mysql.createConnection(c.urls[1]!)]);
        try {
          await other.query(c.kind === 'galera' ? 'SET SESSION wsrep_sync_wait = 1' : "SET SESSION group_replication_consistency = 'BEFORE'");
          await holder.query('BEGIN');
          await holder.query(`SELECT id FROM \`${table}\` WHERE id = 1 FOR UPDATE`);
          await other.query('BEGIN');
          const t0 = performance.now();
          const [rows] = await other.query<mysql.RowDataPacket[]>(`SELECT id FROM \`${table}\` ORDER BY id FOR UPDATE SKIP LOCKED`);
          await other.query(`UPDATE \`${table}\` SET v = v + 1 WHERE id = 1`);
          await other.query('COMMIT');
          const waitedMs = performance.now() - t0;
          // On one server the claim would get [2]; on another node it gets row 1 too, without waiting.
          expect(rows.map((r) => r['id'])).toEqual([1, 2]);
          expect(waitedMs).toBeLessThan(5_000);
          expect((await on(c.urls[2]!, `SELECT v FROM \`${table}\` WHERE id = 1`)).map((r) => r['v'])).toEqual([1]);
        } finally {
          await holder.query('ROLLBACK').catch(() => undefined);
          await Promise.allSettled([holder.end(), other.end()]);
          await on(c.urls[0]!, `DROP TABLE IF EXISTS \`${table}\``);
        }
      });
  });
}
