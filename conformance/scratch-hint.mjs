import mysql from 'mysql2/promise';
import { startServer } from '@taskrow/servers';
for (const [engine, version] of [['mariadb', '10.11'], ['mysql', '9.7'], ['mariadb', '11.8']]) {
  const srv = await startServer({ engine, version });
  try {
    const c = await mysql.createConnection(srv.url);
    await c.query('CREATE TABLE t (id INT PRIMARY KEY, queue VARCHAR(10), phase INT, KEY k (queue, phase))');
    await c.query("INSERT INTO t VALUES (1,'q',2),(2,'q',2),(3,'q',2)");
    for (const sql of [
      "EXPLAIN UPDATE t FORCE INDEX (PRIMARY) SET phase = 3 WHERE id IN (1,2) AND queue = 'q' AND phase = 2",
      "EXPLAIN DELETE t FROM t FORCE INDEX (PRIMARY) WHERE id IN (1,2) AND queue = 'q' AND phase = 2",
      "EXPLAIN DELETE FROM t WHERE id IN (1,2) AND queue = 'q' AND phase = 2",
      "UPDATE t FORCE INDEX (PRIMARY) SET phase = 3 WHERE id IN (1) AND queue = 'q' AND phase = 2",
      "DELETE t FROM t FORCE INDEX (PRIMARY) WHERE id IN (2) AND queue = 'q' AND phase = 2",
    ]) {
      try { const [r] = await c.query(sql); console.log(engine, version, sql.slice(0, 40), Array.isArray(r) ? r.map((x) => `${x.key}/${x.type}`).join(',') : `affected ${r.affectedRows}`); }
      catch (e) { console.log(engine, version, sql.slice(0, 40), 'ERR', e.message); }
    }
    await c.end();
  } finally { await srv.stop(); }
}
