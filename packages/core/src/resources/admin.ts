import { epochMicros } from '../sql.js';
import { placeholderList } from '../chunk.js';
import type { Executor } from '../engine/executor.js';
import { invalid } from '../errors.js';
import { optionsOf, show, toNumber } from '../validate.js';
import { byDigest, resKey, resKeys, type ResKey } from './names.js';
import { micros, settings, DEFAULT_SETTINGS } from './options.js';
import { lockKeyRows, NOW, PRESENT, runs } from './sql.js';
import type { ResourcesTables } from './tables.js';
import type { ResourceKey, RunningJob } from './types.js';

/** The keys among `keys` that exist now, in input order. */
export async function existing(exec: Executor, t: ResourcesTables, keys: readonly ResKey[]): Promise<string[]> {
  const found = new Set<string>();
  for (const part of runs(keys)) {
    const { rows } = await exec.query<{ h: Buffer }>(
      `SELECT \`h\` FROM ${t.keys} WHERE \`h\` IN (${placeholderList(part.length)}) AND ${PRESENT}`,
      part.map((k) => k.h),
    );
    for (const r of rows) found.add(Buffer.from(r.h).toString('binary'));
  }
  return keys.filter((k) => found.has(k.id)).map((k) => k.key);
}

/** Marks keys as existing now, expiring after `ttl` milliseconds when given; ignores locks. */
export async function produceKeys(
  exec: Executor,
  t: ResourcesTables,
  keys: unknown,
  options: { ttl?: number | null; by?: string } | undefined,
): Promise<number> {
  const list = resKeys(keys, 'output').sort(byDigest);
  optionsOf('produce()', options, ['ttl', 'by']);
  const ttl = settings(DEFAULT_SETTINGS, { outputTtl: options?.ttl ?? null }, 'produce() ttl').outputTtl;
  const by = options?.by === undefined ? null : resKey(options.by, 'produce() by').bytes;
  const expires = ttl === null ? 'NULL' : `${NOW} + INTERVAL ${micros(ttl)} MICROSECOND`;
  for (const part of runs(list, 200)) {
    await exec.query(
      `INSERT INTO ${t.keys} (\`h\`, \`k\`, \`produced_at\`, \`expires_at\`, \`produced_by\`)
       VALUES ${part.map(() => `(?, ?, ${NOW}, ${expires}, ?)`).join(', ')}
       ON DUPLICATE KEY UPDATE \`produced_at\` = ${NOW}, \`expires_at\` = ${expires}, \`produced_by\` = ?`,
      [...part.flatMap((k) => [k.h, k.bytes, by]), by],
    );
  }
  return list.length;
}

/** Marks keys as not existing; resolves to how many existed. */
export async function unproduceKeys(exec: Executor, t: ResourcesTables, keys: unknown): Promise<number> {
  const list = resKeys(keys, 'key').sort(byDigest);
  let n = 0;
  for (const part of runs(list)) {
    const res = await exec.query(
      `UPDATE ${t.keys} SET \`produced_at\` = NULL, \`expires_at\` = NULL, \`produced_by\` = NULL
       WHERE \`h\` IN (${placeholderList(part.length)}) AND ${PRESENT}`,
      part.map((k) => k.h),
    );
    n += res.affectedRows;
  }
  return n;
}

/**
 * Removes reader locks of `inputs` and writer locks of `outputs`, whoever holds them, with the key
 * rows locked (as every change to lock rows is made). Resolves to the number of locks removed.
 */
export async function forceRelease(
  exec: Executor,
  t: ResourcesTables,
  keys: { inputs?: Iterable<ResourceKey>; outputs?: Iterable<ResourceKey> },
): Promise<number> {
  if (keys === null || typeof keys !== 'object') throw invalid(`forceRelease() takes { inputs, outputs }, got ${show(keys)}`);
  optionsOf('forceRelease()', keys, ['inputs', 'outputs']);
  const ins = keys.inputs === undefined ? [] : resKeys(keys.inputs, 'input');
  const outs = keys.outputs === undefined ? [] : resKeys(keys.outputs, 'output');
  const all = [...new Map([...ins, ...outs].map((k) => [k.id, k])).values()].sort(byDigest);
  if (all.length === 0) return 0;
  return exec.transaction(
    async (conn) => {
      await lockKeyRows(conn, t, all);
      let n = 0;
      for (const [mode, list] of [
        ['reader', ins],
        ['writer', outs],
      ] as const) {
        for (const part of runs(list)) {
          const res = await conn.query(`DELETE FROM ${t.locks} WHERE \`mode\` = ? AND \`h\` IN (${placeholderList(part.length)})`, [
            mode,
            ...part.map((k) => k.h),
          ]);
          n += res.affectedRows;
        }
      }
      return n;
    },
    { isolation: 'READ COMMITTED' },
  );
}

/** Jobs whose lease has not passed, oldest first, with the keys of their live locks. */
export async function runningJobs(exec: Executor, t: ResourcesTables): Promise<RunningJob[]> {
  const { rows } = await exec.query<{ holder: Buffer; job: Buffer; owner: string; a: unknown; l: unknown }>(
    `SELECT \`holder\`, \`job\`, \`owner\`, ${epochMicros('`acquired_at`')} AS a, ${epochMicros('`lease_until`')} AS l
     FROM ${t.jobs} WHERE \`lease_until\` > ${NOW} ORDER BY \`acquired_at\`, \`holder\``,
  );
  const jobs = new Map<string, RunningJob>();
  for (const r of rows) {
    const id = Buffer.from(r.holder).toString('hex');
    jobs.set(id, {
      id,
      job: Buffer.from(r.job).toString('utf8'),
      owner: String(r.owner),
      acquiredAt: new Date(toNumber(r.a) / 1000),
      leaseUntil: new Date(toNumber(r.l) / 1000),
      inputs: [],
      outputs: [],
    });
  }
  for (const part of runs([...jobs.keys()].map((id) => Buffer.from(id, 'hex')))) {
    const locks = await exec.query<{ holder: Buffer; mode: string; k: Buffer }>(
      `SELECT l.\`holder\`, l.\`mode\`, r.\`k\` FROM ${t.locks} l JOIN ${t.keys} r ON r.\`h\` = l.\`h\`
       WHERE l.\`holder\` IN (${placeholderList(part.length)}) AND l.\`lease_until\` > ${NOW}`,
      part,
    );
    for (const l of locks.rows) {
      const job = jobs.get(Buffer.from(l.holder).toString('hex'));
      (l.mode === 'writer' ? job?.outputs : job?.inputs)?.push(Buffer.from(l.k).toString('utf8'));
    }
  }
  for (const j of jobs.values()) {
    j.inputs.sort();
    j.outputs.sort();
  }
  return [...jobs.values()];
}

/**
 * Deletes lock and job rows whose lease has passed. Safe without locking key rows: a lease that
 * has passed is never extended again, so such a row is already free for every reader of it.
 */
export async function sweep(exec: Executor, t: ResourcesTables): Promise<number> {
  // READ COMMITTED: the scan locks only the rows it deletes, so live locks and new ones never wait.
  return exec.transaction(
    async (conn) => {
      const locks = await conn.query(`DELETE FROM ${t.locks} WHERE \`lease_until\` <= ${NOW}`);
      const jobs = await conn.query(`DELETE FROM ${t.jobs} WHERE \`lease_until\` <= ${NOW}`);
      return locks.affectedRows + jobs.affectedRows;
    },
    { isolation: 'READ COMMITTED' },
  );
}
