import { expect, it } from 'vitest';
import { MAX_KEY_BYTES } from '../../keys.js';
import { TaskrowError } from '../../errors.js';
import { rejection } from '../expect.js';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { probeAllRows, probeKeys } from './probe.js';

/** Exact keys, Unicode, long keys, and bad keys or names that must change nothing. */
export function donesKeys<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('treats "a", "A", "a " and "a<TAB>" as four keys', async () => {
    const { session, prefix } = ctx();
    const ns = freshName('ns');
    const d = session.taskrow.dones(ns);
    expect(await d.mark(['a', 'A', 'a ', 'a\t'])).toBe(4);
    expect(await probeKeys(session.probe, prefix, ns)).toEqual(['A', 'a', 'a\t', 'a '].sort());
    await d.unmark('a ');
    expect(await d.areDone(['a', 'A', 'a ', 'a\t'])).toEqual(['a', 'A', 'a\t']);
  });

  it('round-trips any Unicode byte for byte', async () => {
    const { session, prefix } = ctx();
    const ns = freshName('ns');
    const d = session.taskrow.dones(ns);
    const keys = ['😀', 'e\u0301', '\u00e9', 'Ünïcødé ✓', '中文键', '\u0000nul', 'x\r\ny', '🏳️‍🌈 flag'];
    expect(await d.mark(keys)).toBe(keys.length);
    const hex = await session.probe.query<{ h: string }>(
      `SELECT HEX(COALESCE(d.k_long, d.k)) AS h FROM \`${prefix}dones\` d JOIN \`${prefix}dones_ns\` n ON n.gen = d.gen WHERE n.name = ?`,
      [ns],
    );
    expect(hex.map((r) => r.h.toLowerCase()).sort()).toEqual(keys.map((k) => Buffer.from(k, 'utf8').toString('hex')).sort());
    const listed = (await d.list({ limit: 100 })).entries.map((e) => e.key);
    expect(listed.sort()).toEqual([...keys].sort());
    expect(await d.allDone(keys)).toBe(true);
    expect(await d.isDone('e')).toBe(false);
  });

  it('stores 1,000-character keys, emoji included, and keys up to the byte limit', async () => {
    const { session, prefix } = ctx();
    const ns = freshName('ns');
    const d = session.taskrow.dones(ns);
    const ascii = 'x'.repeat(1000);
    const emoji = '😀'.repeat(1000);
    const atLimit = 'y'.repeat(MAX_KEY_BYTES);
    expect(await d.mark([ascii, emoji, atLimit])).toBe(3);
    expect(await d.areDone([ascii, emoji, atLimit, `${ascii}x`])).toEqual([ascii, emoji, atLimit]);
    expect(await probeKeys(session.probe, prefix, ns)).toEqual([ascii, emoji, atLimit].sort());
  });

  it('keeps long keys that share a 3,000-byte prefix apart', async () => {
    const { session, prefix } = ctx();
    const ns = freshName('ns');
    const d = session.taskrow.dones(ns);
    const stem = 'L'.repeat(3500);
    const keys = [`${stem}a`, `${stem}b`, stem, stem.slice(0, 2999), stem.slice(0, 3000), stem.slice(0, 3001)];
    expect(await d.mark(keys)).toBe(keys.length);
    expect(await d.mark(keys)).toBe(0);
    expect(await d.areDone([...keys, `${stem}c`, stem.slice(0, 2998)])).toEqual(keys);
    expect(await probeKeys(session.probe, prefix, ns)).toEqual([...keys].sort());
    expect(await d.unmark(`${stem}a`)).toBe(1);
    expect(await d.areDone(keys)).toEqual(keys.slice(1));
    const listed = await d.list({ limit: 2 });
    const all = [...listed.entries.map((e) => e.key)];
    let next = listed.next;
    while (next) {
      const page = await d.list({ limit: 2, after: next });
      all.push(...page.entries.map((e) => e.key));
      next = page.next;
    }
    expect(all.sort()).toEqual(keys.slice(1).sort());
  });

  it('rejects a too-long key, an empty key and non-strings, naming the limit, and writes nothing', async () => {
    const { session, prefix } = ctx();
    const ns = freshName('ns');
    const d = session.taskrow.dones(ns);
    const before = await probeAllRows(session.probe, prefix);
    const long = await rejection(d.mark(['ok-1', 'z'.repeat(MAX_KEY_BYTES + 1), 'ok-2']));
    expect(long.code).toBe('INVALID_KEY');
    expect(long.message).toContain(String(MAX_KEY_BYTES));
    const emojiLong = await rejection(d.mark('😀'.repeat(MAX_KEY_BYTES / 4 + 1)));
    expect(emojiLong.code).toBe('INVALID_KEY');
    expect((await rejection(d.mark(''))).code).toBe('INVALID_KEY');
    expect((await rejection(d.mark([42 as unknown as string]))).code).toBe('INVALID_KEY');
    expect((await rejection(d.mark(null as unknown as string))).code).toBe('INVALID_KEY');
    expect((await rejection(d.mark(['\ud800']))).code).toBe('INVALID_KEY');
    expect((await rejection(d.isDone(undefined as unknown as string))).code).toBe('INVALID_KEY');
    expect(await probeAllRows(session.probe, prefix)).toBe(before);
    expect(await probeKeys(session.probe, prefix, ns)).toEqual([]);
  });

  it('rejects invalid namespace names with INVALID_NAME before any query', async () => {
    const { session, prefix } = ctx();
    const nsRows = async (): Promise<number> => Number((await session.probe.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM \`${prefix}dones_ns\``))[0]?.n);
    const before = await nsRows();
    for (const bad of ['', 'a'.repeat(65), 'has space', "x'; DROP TABLE t; --", '../etc', '-lead', 'tab\t', 'é', 7, null]) {
      let err: unknown;
      try {
        await session.taskrow.dones(bad as string).mark('k');
      } catch (e) {
        err = e;
      }
      expect(err, JSON.stringify(bad)).toBeInstanceOf(TaskrowError);
      expect((err as TaskrowError).code).toBe('INVALID_NAME');
    }
    expect(await nsRows()).toBe(before);
  });

  it('splits a batch larger than a server packet transparently', async () => {
    const { session, prefix } = ctx();
    const ns = freshName('ns');
    const d = session.taskrow.dones(ns);
    // 6,000 keys of 4,000 bytes: 24 MB, over MariaDB's 16 MB default packet.
    const keys = Array.from({ length: 6000 }, (_, i) => `${String(i).padStart(6, '0')}${'p'.repeat(3994)}`);
    expect(await d.mark(keys)).toBe(6000);
    const rows = await session.probe.query<{ n: unknown; b: unknown }>(
      `SELECT COUNT(*) AS n, SUM(LENGTH(COALESCE(d.k_long, d.k))) AS b FROM \`${prefix}dones\` d JOIN \`${prefix}dones_ns\` n ON n.gen = d.gen WHERE n.name = ?`,
      [ns],
    );
    expect(Number(rows[0]?.n)).toBe(6000);
    expect(Number(rows[0]?.b)).toBe(6000 * 4000);
    // Lookups too: 8,000 candidates in chunks of 10,000 would be one 48 MB statement.
    const fresh = Array.from({ length: 2000 }, (_, i) => `${String(6000 + i).padStart(6, '0')}${'p'.repeat(3994)}`);
    const pending: string[] = [];
    for await (const key of d.pending([...keys, ...fresh], { chunkSize: 10_000 })) pending.push(key);
    expect(pending).toEqual(fresh);
    expect(await d.areDone([...fresh, ...keys])).toEqual(keys);
    expect(await d.unmark(keys)).toBe(6000);
    expect(await d.count()).toBe(0);
  });
}
