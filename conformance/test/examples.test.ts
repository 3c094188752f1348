import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { label, targets } from '../src/targets.js';

// Runs the built examples (examples/*/dist/main.js, built by `turbo run build`) as child processes
// against the first server and checks what they print against the database, read through a probe.

const target = targets()[0]!;
const prefix = `ex${process.pid}_${Math.random().toString(36).slice(2, 8)}_`;
const examples = new URL('../../examples/', import.meta.url).pathname;

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs example `name` with `args`. With `signalWhen`, sends SIGTERM once stdout matches it. Kills the
 * child after 90 s so a hung example fails the test instead of the run.
 */
function example(name: string, args: string[], o: { env?: Record<string, string | undefined>; signalWhen?: RegExp } = {}): Promise<Run> {
  const main = join(examples, name, 'dist', 'main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: build the examples first (pnpm turbo run build)`);
  const env: NodeJS.ProcessEnv = { ...process.env, TASKROW_URL: target.url, TASKROW_PREFIX: prefix, ...o.env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [main, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const killer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    let stdout = '';
    let stderr = '';
    let signalled = false;
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (o.signalWhen && !signalled && o.signalWhen.test(stdout)) {
        signalled = true;
        child.kill('SIGTERM');
      }
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** The numbers captured by `re` in `text`; fails the test when the line is missing. */
function numbers(text: string, re: RegExp): number[] {
  const m = re.exec(text);
  expect(m, `expected output matching ${re}:\n${text}`).not.toBeNull();
  return m!.slice(1).map(Number);
}

describe(`examples against ${label(target)}`, () => {
  let probe: mysql.Connection;
  const rows = async (sql: string, params: unknown[] = []): Promise<mysql.RowDataPacket[]> => (await probe.query<mysql.RowDataPacket[]>(sql, params))[0];
  const utf8 = (v: unknown): string => Buffer.from(v as Buffer).toString('utf8');

  beforeAll(async () => {
    probe = await mysql.createConnection(target.url);
  });
  afterAll(async () => {
    if (!probe) return;
    const tables = await rows('SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?', [
      `${prefix.replace(/_/g, '\\_')}%`,
    ]);
    for (const r of tables) await probe.query(`DROP TABLE IF EXISTS \`${r['t']}\``);
    await probe.end();
  });

  const doneKeys = async (namespace: string): Promise<string[]> =>
    (
      await rows(`SELECT COALESCE(d.k_long, d.k) AS k FROM \`${prefix}dones\` d JOIN \`${prefix}dones_ns\` n ON n.gen = d.gen WHERE n.name = ?`, [namespace])
    ).map((r) => utf8(r['k']));

  describe('dones-resubmit', () => {
    it('without TASKROW_URL exits 2 and says what to set', async () => {
      const r = await example('dones-resubmit', [], { env: { TASKROW_URL: undefined } });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('TASKROW_URL is not set');
      expect(r.stdout).toBe('');
    });

    it('prints exactly the generated tasks the database does not have as done, in order', async () => {
      const r = await example('dones-resubmit', ['--tasks', '2000', '--jobs', '20', '--die', '0.4', '--show', '1000000', '--namespace', 'gen']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const done = await doneKeys('gen');
      const [jobs, died, marked] = numbers(r.stdout, /^round 1: (\d+) jobs ran, (\d+) died part-way; (\d+) tasks marked done$/m);
      expect([jobs, died, marked]).toEqual([20, 8, done.length]);
      const all = Array.from({ length: 2000 }, (_, i) => `task-${String(i + 1).padStart(6, '0')}`);
      const doneSet = new Set(done);
      expect(done.every((k) => all.includes(k))).toBe(true);
      const printed = [...r.stdout.matchAll(/^ {2}bsub .* node task\.js (\S+)$/gm)].map((m) => m[1]);
      expect(printed).toEqual(all.filter((t) => !doneSet.has(t)));
      // each dying job stops before the end of its 100 tasks, so at least one task per dead job is pending
      expect(printed.length).toBeGreaterThanOrEqual(8);
      expect(numbers(r.stdout, /^pending: (\d+) of (\d+) tasks/m)).toEqual([2000 - done.length, 2000]);
    });

    it('reads a task file (CRLF, blank lines, spaces kept) and streams it through pending()', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'taskrow-example-'));
      try {
        const file = join(dir, 'tasks.txt');
        writeFileSync(file, 'a\r\nb\n\n c \r\nd\té\n\ne\n');
        const tasks = ['a', 'b', ' c ', 'd\té', 'e'];
        const all = await example('dones-resubmit', [file, '--jobs', '2', '--die', '0', '--namespace', 'file']);
        expect(all.code).toBe(0);
        expect((await doneKeys('file')).sort()).toEqual([...tasks].sort());
        expect(all.stdout).toMatch(/^pending: 0 of 5 tasks/m);

        // one job that dies before its first checkpoint marks nothing: every task is resubmitted
        const none = await example('dones-resubmit', [file, '--jobs', '1', '--die', '1', '--checkpoint', '1000', '--show', '10', '--namespace', 'file']);
        expect(none.code).toBe(0);
        expect(await doneKeys('file')).toEqual([]);
        expect(none.stdout).toMatch(/^round 1: 1 jobs ran, 1 died part-way; 0 tasks marked done$/m);
        expect([...none.stdout.matchAll(/^ {2}bsub .* node task\.js (.+)$/gm)].map((m) => m[1])).toEqual(['a', 'b', "' c '", "'d\té'", 'e']);
        expect(none.stdout).toMatch(/^pending: 5 of 5 tasks/m);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('queue-service', () => {
    type Phases = { ready: number; delayed: number; running: number; done: number; dead: number; blocked: number };
    const phases = async (queue: string): Promise<Phases> => {
      const names = ['ready', 'delayed', 'running', 'done', 'dead', 'blocked'] as const;
      const out: Phases = { ready: 0, delayed: 0, running: 0, done: 0, dead: 0, blocked: 0 };
      for (const r of await rows(`SELECT phase, COUNT(*) AS n FROM \`${prefix}queue_jobs\` WHERE queue = ? GROUP BY phase`, [queue])) {
        out[names[Number(r['phase'])]!] = Number(r['n']);
      }
      return out;
    };
    const printedStats = (stdout: string, queue: string): Phases => {
      const [ready, delayed, running, done, dead, blocked] = numbers(
        stdout,
        new RegExp(`^queue "${queue}": ready (\\d+), delayed (\\d+), running (\\d+), done (\\d+), dead (\\d+), blocked (\\d+)$`, 'm'),
      );
      return { ready: ready!, delayed: delayed!, running: running!, done: done!, dead: dead!, blocked: blocked! };
    };

    it('drains the queue: every job done once, the flaky one on its third attempt, the poison one dead', async () => {
      const r = await example('queue-service', ['--jobs', '300', '--work-ms', '1', '--queue', 'demo']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^stopping: the queue is drained$/m);
      const [enqueued, deduplicated] = numbers(r.stdout, /^enqueued: (\d+) jobs \((\d+) enqueues deduplicated\)$/m);
      expect([enqueued, deduplicated]).toEqual([300 + 7, 2]);
      const [completed, failed, lost, released] = numbers(
        r.stdout,
        /^worker: completed (\d+), failed attempts (\d+), lost leases (\d+), released at stop (\d+)$/m,
      );
      expect([completed, failed, lost, released]).toEqual([enqueued! - 1, 5, 0, 0]);

      const db = await phases('demo');
      expect(db).toEqual({ ready: 0, delayed: 0, running: 0, done: completed, dead: 1, blocked: 0 });
      expect(printedStats(r.stdout, 'demo')).toEqual(db);
      const [dead] = await rows(`SELECT id, attempt, max_attempts, last_error FROM \`${prefix}queue_jobs\` WHERE queue = ? AND phase = 4`, ['demo']);
      expect([Number(dead!['attempt']), Number(dead!['max_attempts'])]).toEqual([3, 3]);
      expect(String(dead!['last_error'])).toContain('cannot decode the image');
      expect(r.stdout).toContain(`dead: job ${dead!['id']} (poison) after 3 attempts`);
      const special = await rows(
        `SELECT JSON_UNQUOTE(JSON_EXTRACT(payload, '$.kind')) AS kind, COUNT(*) AS n, MAX(attempt) AS attempt FROM \`${prefix}queue_jobs\`
         WHERE queue = ? AND phase = 3 AND JSON_UNQUOTE(JSON_EXTRACT(payload, '$.kind')) IN ('report', 'flaky') GROUP BY kind ORDER BY kind`,
        ['demo'],
      );
      expect(special.map((s) => [s['kind'], Number(s['n']), Number(s['attempt'])])).toEqual([
        ['flaky', 1, 3],
        ['report', 1, 1],
      ]);
    });

    it('on SIGTERM stops gracefully: nothing left running, the rest still queued, the summary matches the table', async () => {
      const r = await example('queue-service', ['--serve', '--jobs', '3000', '--work-ms', '20', '--queue', 'serve'], { signalWhen: /^progress: /m });
      expect(r.stderr).toBe('');
      expect([r.code, r.signal]).toEqual([0, null]);
      expect(r.stdout).toMatch(/^stopping: received SIGTERM$/m);
      const [enqueued] = numbers(r.stdout, /^enqueued: (\d+) jobs/m);
      const [completed] = numbers(r.stdout, /^worker: completed (\d+),/m);
      const db = await phases('serve');
      expect(printedStats(r.stdout, 'serve')).toEqual(db);
      expect(db.running).toBe(0);
      expect(db.done).toBe(completed);
      expect(db.ready).toBeGreaterThan(0);
      expect(db.ready + db.delayed + db.done + db.dead).toBe(enqueued);
    });
  });

  describe('loop-crawler', () => {
    it('crawls every page once, leaves nothing locked, and a second run crawls only what is due', async () => {
      const first = await example('loop-crawler', ['--pages', '200', '--workers', '4', '--delay-ms', '0']);
      expect(first.stderr).toBe('');
      expect(first.code).toBe(0);
      const [crawled, fetches, failed, recrawled, added] = numbers(
        first.stdout,
        /^crawled (\d+) pages in [\d.]+ s: (\d+) fetches, (\d+) failed and were bumped for a retry, (\d+) bumped pages crawled again; (\d+) new links added/m,
      );
      const count = async (where: string): Promise<number> => Number((await rows(`SELECT COUNT(*) AS n FROM \`${prefix}loop_crawl\` WHERE ${where}`))[0]!['n']);
      expect(await count('1 = 1')).toBe(200);
      expect(await count('last_updated IS NOT NULL')).toBe(200);
      expect(await count('lock_until IS NOT NULL')).toBe(0);
      expect([crawled, added! + 3, fetches]).toEqual([200, 200, crawled! + failed! + recrawled!]);
      expect(first.stdout).toMatch(/^stats: locked 0, bumped 0,/m);

      const second = await example('loop-crawler', ['--pages', '200', '--workers', '4', '--delay-ms', '0']);
      expect(second.code).toBe(0);
      expect(second.stdout).toMatch(/^seeds: 3 home pages bumped \(0 new\)$/m);
      const [again, , , , addedAgain] = numbers(
        second.stdout,
        /^crawled (\d+) pages .*: (\d+) fetches, (\d+) failed .*, (\d+) bumped pages crawled again; (\d+) new links added/m,
      );
      expect(again).toBeGreaterThanOrEqual(3);
      expect(again).toBeLessThan(200);
      expect(addedAgain).toBe(0);
      expect(await count('1 = 1')).toBe(200);
      expect(await count('lock_until IS NOT NULL')).toBe(0);
    });
  });

  describe('resources-pipeline', () => {
    it('runs the chain in order, refuses a report whose input never appeared, and records the flow graph', async () => {
      const r = await example('resources-pipeline', ['--days', '3', '--wait', '3', '--work-ms', '20']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^run report\.2024-01-01: refused: input_missing on clean\.events\.2024-01-01$/m);
      expect(r.stdout).toMatch(/^jobs: 7 ran, 1 failed, 1 refused; outputs existing: 7 of 9$/m);
      const produced = (await rows(`SELECT k FROM \`${prefix}resources\` WHERE produced_at IS NOT NULL`)).map((x) => utf8(x['k'])).sort();
      expect(produced).toEqual(
        ['raw.events', 'clean.events', 'reports.daily']
          .flatMap((k) => ['2024-01-01', '2024-01-02', '2024-01-03'].map((d) => `${k}.${d}`))
          .filter((k) => k !== 'clean.events.2024-01-03' && k !== 'reports.daily.2024-01-03')
          .sort(),
      );
      const [edgeCount] = numbers(r.stdout, /^flow graph \((\d+) edges\):$/m);
      const edges = (await rows(`SELECT src, dst FROM \`${prefix}resource_edges\``)).map((e) => `${utf8(e['src'])} -> ${utf8(e['dst'])}`).sort();
      expect(edges).toEqual([
        'clean.events.* -> report.*',
        'extract.* -> raw.events.*',
        'raw.events.* -> transform.*',
        'report.* -> reports.daily.*',
        'transform.* -> clean.events.*',
      ]);
      expect(edgeCount).toBe(edges.length);
      for (const e of edges) expect(r.stdout).toContain(`  ${e}\n`);
      const live = await rows(`SELECT COUNT(*) AS n FROM \`${prefix}resource_locks\` WHERE lease_until > UTC_TIMESTAMP(6)`);
      expect(Number(live[0]!['n'])).toBe(0);
    });
  });
});
