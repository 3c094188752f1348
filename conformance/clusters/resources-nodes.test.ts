import mysql from 'mysql2/promise';
import { freshName } from '@taskrow/core/conformance';
import { taskrow } from '@taskrow/mysql2';
import { describe, expect, it } from 'vitest';
import { clusters } from '../src/cluster-harness.js';

const ROUNDS = 120;
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Who holds one output right now, as the jobs see it, kept in this process (outside the database). */
class HolderLedger {
  holders = 0;
  entries = 0;
  /** Read before a pause and written back +1 after it: two holders at once lose an update. */
  counter = 0;
  readonly violations: string[] = [];
  enter(who: string): void {
    if (this.holders > 0) this.violations.push(`${who} acquired while ${this.holders} other holder(s) held the output`);
    this.holders += 1;
    this.entries += 1;
  }
  leave(): void {
    this.holders -= 1;
  }
}

// Resources' locks on a cluster with several writable nodes: one client per node, all after the
// same output key, many rounds each. A `FOR UPDATE` lock is local to its node, so exclusivity
// across nodes rests on the acquirer writing the key rows it locks (certified at COMMIT).
for (const c of clusters().filter((k) => k.kind !== 'group-replication-single-primary')) {
  describe(`${c.kind} · resources across nodes`, () => {
    it(`one client per node takes the same output ${ROUNDS} times each: never two holders at once`, async () => {
      const prefix = `${freshName('rx')}_`;
      const pools = c.urls.map((url) => mysql.createPool({ uri: url, connectionLimit: 4 }));
      try {
        const clients = await Promise.all(pools.map((p) => taskrow(p, { prefix })));
        await clients[0]!.migrate();
        const output = `${prefix}out`;
        const ledger = new HolderLedger();
        /** Certification conflicts so far over every node: Galera's failures and brute-force aborts, Group Replication's detected conflicts. */
        const conflicts = async (): Promise<number> => {
          const sql =
            c.kind === 'galera'
              ? "SELECT SUM(VARIABLE_VALUE) AS n FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN ('WSREP_LOCAL_CERT_FAILURES', 'WSREP_LOCAL_BF_ABORTS')"
              : 'SELECT SUM(COUNT_CONFLICTS_DETECTED) AS n FROM performance_schema.replication_group_member_stats WHERE MEMBER_ID = @@server_uuid';
          let n = 0;
          for (const pool of pools) n += Number((await pool.query<mysql.RowDataPacket[]>(sql))[0][0]!['n'] ?? 0);
          return n;
        };
        const before = await conflicts();
        const acquired = await Promise.all(
          clients.map(async (tr, node) => {
            const job = tr.resources({ releaseOnExit: false }).job(`${prefix}job.${node}`, { outputs: [output], lease: 60_000, wait: 60_000 });
            let n = 0;
            for (let round = 0; round < ROUNDS; round++) {
              await job.acquire();
              ledger.enter(`node ${node + 1}, round ${round}`);
              const seen = ledger.counter;
              await pause(Math.random() * 3);
              ledger.counter = seen + 1;
              ledger.leave();
              await job.release();
              n += 1;
            }
            return n;
          }),
        );
        const certified = (await conflicts()) - before;
        process.stderr.write(
          `${c.kind}: ${ledger.entries} acquisitions over ${c.urls.length} nodes, ${certified} certification conflicts/aborts on the nodes\n`,
        );
        expect(ledger.violations).toEqual([]);
        expect(acquired).toEqual(c.urls.map(() => ROUNDS));
        expect(ledger.counter).toBe(ROUNDS * c.urls.length);
        const [rows] = await pools[1]!.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS n FROM \`${prefix}resource_locks\``);
        expect(Number(rows[0]!['n'])).toBe(0);
      } finally {
        await Promise.allSettled(
          pools.map(async (p, i) => {
            if (i === 0) {
              const [tables] = await p.query<mysql.RowDataPacket[]>(
                'SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?',
                [`${prefix}%`],
              );
              for (const t of tables) await p.query(`DROP TABLE IF EXISTS \`${String(t['t'])}\``);
            }
            await p.end();
          }),
        );
      }
    });
  });
}
