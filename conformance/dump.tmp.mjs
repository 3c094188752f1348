import mysql from 'mysql2/promise';
import { taskrow } from '@taskrow/mysql2';
const url = process.argv[2]; const prefix = process.argv[3] ?? 'dump_';
const pool = mysql.createPool({ uri: url, connectionLimit: 2, multipleStatements: false });
const tr = await taskrow(pool, { prefix });
const r = await tr.migrate();
console.error('applied', r.applied.length);
const [tables] = await pool.query(`SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE '${prefix}%' ORDER BY TABLE_NAME`);
for (const t of tables) { const [[c]] = await pool.query(`SHOW CREATE TABLE \`${t.TABLE_NAME}\``); console.log(c['Create Table'] + ';\n'); }
const [procs] = await pool.query(`SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME LIKE '${prefix}%'`);
console.log('-- routines:', procs.map((p) => p.ROUTINE_NAME).join(', '));
await pool.end();
