import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { label, targets } from '../../src/targets.js';

// The programs of docs/getting-started.md (examples/getting-started, included in the doc verbatim:
// scripts/check-docs.mjs) run as a reader runs them, `node app.mjs` with DATABASE_URL set, on every
// server, each in a database of its own. Each MUST exit by itself and print exactly its `.out` file,
// the output the doc shows; a second run on the same database prints the same.

const dir = fileURLToPath(new URL('../../../examples/getting-started/', import.meta.url));
const programs = ['app.mjs', 'knex-app.mjs'];

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `program` with DATABASE_URL=url; SIGKILLs it after 45 s, so a program that hangs fails. */
function run(program: string, url: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [program], { cwd: dir, env: { ...process.env, DATABASE_URL: url }, stdio: ['ignore', 'pipe', 'pipe'] });
    const killer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

for (const target of targets()) {
  describe(`${label(target)} · getting-started programs`, () => {
    const database = `gs${process.pid.toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
    const url = new URL(target.url);
    url.pathname = `/${database}`;
    let admin: mysql.Connection;

    beforeAll(async () => {
      admin = await mysql.createConnection(target.url);
      await admin.query(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4`);
    });
    afterAll(async () => {
      if (!admin) return;
      await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
      await admin.end();
    });

    it.each(programs)('%s exits by itself and prints what the doc shows, twice', async (program) => {
      const expected = readFileSync(join(dir, program.replace(/\.mjs$/, '.out')), 'utf8');
      for (let round = 1; round <= 2; round++) {
        const r = await run(program, url.href);
        expect({ round, ...r }).toEqual({ round, code: 0, signal: null, stdout: expected, stderr: '' });
      }
    });
  });
}
