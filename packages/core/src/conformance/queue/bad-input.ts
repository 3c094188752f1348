import { expect, it } from 'vitest';
import type { TaskrowErrorCode } from '../../errors.js';
import { MAX_PAYLOAD_BYTES } from '../../queue/model/payload.js';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { probeJob, probeJobs, probeTotal } from './probe.js';
import { rejection } from '../expect.js';

/** Bad input: a TaskrowError naming the problem, before any SQL, and nothing written or lost. */
export function queueBadInput<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('rejects payloads that are not JSON-serialisable or too large, writing nothing', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<unknown>(name);
    const cycle: Record<string, unknown> = { a: 1 };
    cycle['self'] = cycle;
    const cases: [unknown, string][] = [
      [() => 1, 'function'],
      [{ nested: { fn: () => 1 } }, 'function'],
      [10n, 'BigInt'],
      [{ big: [1n] }, 'BigInt'],
      [cycle, 'cycle'],
      [undefined, 'undefined'],
      [[1, undefined], 'undefined'],
      [Number.NaN, 'NaN'],
      [{ inf: Infinity }, 'Infinity'],
      [new Map([[1, 2]]), 'Map'],
      [Symbol('s'), 'symbol'],
      ['x'.repeat(MAX_PAYLOAD_BYTES - 1), String(MAX_PAYLOAD_BYTES)],
      ['é'.repeat(MAX_PAYLOAD_BYTES / 2), String(MAX_PAYLOAD_BYTES)],
    ];
    const before = await probeTotal(session.probe, prefix);
    for (const [payload, says] of cases) {
      const err = await rejection(q.enqueue(payload), 'INVALID_ARGUMENT');
      expect(err.message).toContain(says);
    }
    const batch = await rejection(q.enqueueMany([{ payload: 1 }, { payload: () => 2 }, { payload: 3 }]), 'INVALID_ARGUMENT');
    expect(batch.message).toContain('jobs[1]');
    expect(await probeTotal(session.probe, prefix)).toBe(before);
  });

  it('rejects bad enqueue options, naming the option, writing nothing', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name);
    const bad: [object, string, TaskrowErrorCode][] = [
      [{ delay: -1000 }, 'delay', 'INVALID_ARGUMENT'],
      [{ delay: Number.NaN }, 'delay', 'INVALID_ARGUMENT'],
      [{ delay: '5' }, 'delay', 'INVALID_ARGUMENT'],
      [{ delay: 5000, runAt: new Date() }, 'runAt or delay', 'INVALID_ARGUMENT'],
      [{ runAt: new Date(Number.NaN) }, 'runAt', 'INVALID_ARGUMENT'],
      [{ runAt: '2024-01-01' }, 'runAt', 'INVALID_ARGUMENT'],
      [{ priority: 1.5 }, 'priority', 'INVALID_ARGUMENT'],
      [{ priority: 40000 }, 'priority', 'INVALID_ARGUMENT'],
      [{ maxAttempts: 0 }, 'maxAttempts', 'INVALID_ARGUMENT'],
      [{ maxAttempts: Number.POSITIVE_INFINITY }, 'maxAttempts', 'INVALID_ARGUMENT'],
      [{ group: 'has space' }, 'group', 'INVALID_NAME'],
      [{ dedupKey: '' }, 'dedupKey', 'INVALID_KEY'],
      [{ dedupKey: 'k'.repeat(4097) }, '4096', 'INVALID_KEY'],
    ];
    for (const [options, says, code] of bad) {
      const err = await rejection(q.enqueue('x', options as never), code);
      expect(err.message, JSON.stringify(options)).toContain(says);
    }
    expect(await probeJobs(session.probe, prefix, name)).toEqual([]);
  });

  it('rejects invalid queue names with INVALID_NAME', async () => {
    for (const bad of ['', 'a'.repeat(65), 'has space', "x'; DROP TABLE t; --", '-lead', 'é', 7, null]) {
      const err = await rejection(() => ctx().session.taskrow.queue(bad as string), 'INVALID_NAME');
      expect(err.message).toContain('queue name');
    }
  });

  it('rejects bad claim arguments', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name);
    await q.enqueue('x');
    for (const opts of [
      { limit: -1, lease: 1000 },
      { limit: 1.5, lease: 1000 },
      { limit: Number.NaN, lease: 1000 },
      { limit: 1001, lease: 1000 },
    ]) {
      expect((await rejection(q.claim(opts), 'INVALID_ARGUMENT')).message).toContain('limit');
    }
    for (const lease of [0, -1, Number.NaN, Infinity, 8 * 24 * 3_600_000, '5000']) {
      expect((await rejection(q.claim({ limit: 1, lease: lease as number }), 'INVALID_ARGUMENT')).message).toContain('lease');
    }
    const tooLong = (await rejection(q.claim({ limit: 1, lease: 8 * 24 * 3_600_000 }), 'INVALID_ARGUMENT')).message;
    expect(tooLong).toContain('milliseconds from 0 to 604,800,000');
    expect(tooLong).toContain('691200000');
    await rejection(q.claim(undefined as never), 'INVALID_ARGUMENT');
    await rejection(q.claim({ limit: 1, lease: 1000, group: '' }), 'INVALID_NAME');
    expect((await probeJobs(session.probe, prefix, name)).map((j) => j.state)).toEqual(['ready']);
  });

  it("rejects acks of another queue's job and acks of a job already acked, changing nothing", async () => {
    const { session, prefix } = ctx();
    const [name, other] = [freshName('q'), freshName('q')];
    const q = session.taskrow.queue(name);
    const o = session.taskrow.queue(other);
    await q.enqueueMany([{ payload: 1 }, { payload: 2 }]);
    await o.enqueue('theirs');
    const mine = await q.claim({ limit: 2, lease: 60_000 });
    const [theirs] = await o.claim({ limit: 1, lease: 60_000 });
    // Named by the job's queue field: refused before any SQL.
    const wrong = await rejection(q.complete([mine[0]!, theirs!]), 'INVALID_ARGUMENT');
    expect(wrong.message).toContain(other);
    // A forged reference (right queue field, another queue's id): found by the database, nothing applied.
    await rejection(q.complete([mine[0]!, { id: theirs!.id, queue: name, token: theirs!.token }]), 'INVALID_ARGUMENT');
    expect((await probeJobs(session.probe, prefix, name)).map((j) => j.state)).toEqual(['running', 'running']);
    expect((await probeJob(session.probe, prefix, theirs!.id))!.state).toBe('running');
    // Twice through the same Job object: refused before SQL; through a copy: LEASE_LOST from the database.
    await q.complete(mine[0]!);
    expect((await rejection(q.complete(mine[0]!), 'INVALID_ARGUMENT')).message).toContain('already');
    await rejection(q.release(mine[0]!), 'INVALID_ARGUMENT');
    await rejection(q.complete({ ...mine[0]! }), 'LEASE_LOST');
    await rejection(q.complete([mine[1]!, mine[1]!]), 'INVALID_ARGUMENT');
    await rejection(q.complete({ id: 999_999_999, queue: name, token: 1 }), 'LEASE_LOST');
    for (const junk of [null, 5, { id: 'x', queue: name, token: 1 }, { id: 1, queue: name }]) await rejection(q.complete(junk as never), 'INVALID_ARGUMENT');
    await rejection(q.fail(mine[1]!, 'e', { retryIn: -1000 }), 'INVALID_ARGUMENT');
    await rejection(q.extend(mine[1]!, 0), 'INVALID_ARGUMENT');
    await rejection(q.release(mine[1]!, { delay: Number.NaN }), 'INVALID_ARGUMENT');
    expect((await probeJob(session.probe, prefix, mine[1]!.id))!).toMatchObject({ state: 'running', token: mine[1]!.token });
    await q.complete(mine[1]!);
    await o.complete(theirs!);
    expect(await probeJobs(session.probe, prefix, name)).toEqual([]);
  });
}
