import mysql from 'mysql2/promise';
import { startServer } from '@taskrow/servers';
import { taskrow } from '@taskrow/mysql2';
const srv = await startServer({ engine: process.argv[2] ?? 'mariadb', version: process.argv[3] ?? '11.8' });
try {
  const pool = mysql.createPool({ uri: srv.url, connectionLimit: 4 });
  await pool.query('SET GLOBAL innodb_print_all_deadlocks = ON').catch(() => {});
  const tr = await taskrow(pool, { prefix: 'd_' }); await tr.migrate();
  const conns = await Promise.all(Array.from({ length: 12 }, () => mysql.createConnection(srv.url)));
  const trs = await Promise.all(conns.map((c) => taskrow(c, { prefix: 'd_' })));
  const N = 6000;
  const ws = trs.slice(0, 10).map((t) => t.queue('q').work(() => undefined, { concurrency: 100, batchSize: 100, pollInterval: 0.05 }));
  await Promise.all(trs.slice(10).map(async (t) => { for (let i = 0; i < N / 2; i += 10) await t.queue('q').enqueueMany(Array.from({ length: 10 }, () => ({ payload: { x: 1 } }))); }));
  while (ws.reduce((s, w) => s + w.counts.completed, 0) < N) await new Promise((r) => setTimeout(r, 10));
  await Promise.all(ws.map((w) => w.stop()));
  const [[st]] = await pool.query("SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'"); console.log('deadlocks', st?.Value);
  const [s] = await pool.query('SHOW ENGINE INNODB STATUS');
  const txt = s[0].Status; const i = txt.indexOf('LATEST DETECTED DEADLOCK'); console.log(i >= 0 ? txt.slice(i, i + 4000) : 'none');
  await Promise.all(conns.map((c) => c.end())); await pool.end();
} finally { await srv.stop(); }
