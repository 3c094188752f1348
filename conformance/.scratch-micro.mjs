import mysql from 'mysql2/promise';
import knexF from 'knex';
import { startTargets } from '@taskrow/servers';
const set = await startTargets({ requireAll: false });
const url = set.targets.find((t) => t.version.startsWith(process.argv[2])).url;
const pool = mysql.createPool({ uri: url, connectionLimit: 4 });
const knex = knexF({ client: 'mysql2', connection: url, pool: { min: 0, max: 4 } });
const N = 3000;
async function t(name, fn) { await fn(200); const t0 = performance.now(); await fn(N); const ms = performance.now() - t0; console.log(name, (ms * 1000 / N).toFixed(1), 'us/op'); }
for (let r = 0; r < 2; r++) {
await t('mysql2 pool.query', async (n) => { for (let i = 0; i < n; i++) await pool.query('SELECT ? AS x', [i]); });
await t('knex.raw', async (n) => { for (let i = 0; i < n; i++) await knex.raw('SELECT ? AS x', [i]); });
await t('mysql2 tx 3 stmts', async (n) => { for (let i = 0; i < n / 3; i++) { const c = await pool.getConnection(); await c.beginTransaction(); await c.query('SELECT ? AS x', [i]); await c.commit(); c.release(); } });
await t('knex tx 3 stmts', async (n) => { for (let i = 0; i < n / 3; i++) await knex.transaction(async (trx) => { await trx.raw('SELECT ? AS x', [i]); }); });
await t('knex tx via conn', async (n) => { for (let i = 0; i < n / 3; i++) await knex.transaction(async (trx) => { const c = await trx.client.acquireConnection(); await new Promise((res, rej) => c.query('SELECT ? AS x', [i], (e, r) => e ? rej(e) : res(r))); }); });
}
await pool.end(); await knex.destroy(); await set.stopAll();
