import mysql from 'mysql2/promise';
import knexF from 'knex';
import { startTargets } from '@taskrow/servers';
const set = await startTargets({ requireAll: false });
const url = set.targets.find((t) => t.version.startsWith('11.8')).url;
const pool = mysql.createPool({ uri: url, connectionLimit: 4 });
const knex = knexF({ client: 'mysql2', connection: url, pool: { min: 0, max: 4 } });
const q = (c, sql, p) => new Promise((res, rej) => c.query(sql, p, (e, r) => (e ? rej(e) : res(r))));
const N = 1500;
const cases = {
  'mysql2 tx': async (i) => { const c = await pool.getConnection(); await c.beginTransaction(); for (let k = 0; k < 3; k++) await c.query('SELECT ? AS x', [i]); await c.commit(); c.release(); },
  'knex tx raw': async (i) => knex.transaction(async (trx) => { for (let k = 0; k < 3; k++) await trx.raw('SELECT ? AS x', [i]); }),
  'knex tx conn': async (i) => knex.transaction(async (trx) => { const c = await trx.client.acquireConnection(); for (let k = 0; k < 3; k++) await q(c, 'SELECT ? AS x', [i]); }),
  'knex pool conn': async (i) => { const c = await knex.client.acquireConnection(); try { await q(c, 'BEGIN'); for (let k = 0; k < 3; k++) await q(c, 'SELECT ? AS x', [i]); await q(c, 'COMMIT'); } finally { knex.client.releaseConnection(c); } },
};
const res = {};
for (let r = 0; r < 4; r++) for (const [name, fn] of Object.entries(cases)) {
  for (let i = 0; i < 100; i++) await fn(i);
  const t0 = performance.now(); for (let i = 0; i < N; i++) await fn(i); (res[name] ??= []).push((performance.now() - t0) * 1000 / N);
}
for (const [k, v] of Object.entries(res)) console.log(k, v.map((x) => x.toFixed(0)).join(' '), 'us/tx');
await pool.end(); await knex.destroy(); await set.stopAll();
