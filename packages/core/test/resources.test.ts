import { describe, expect, it } from 'vitest';
import { TaskrowError } from '../src/errors.js';
import { flowEdges } from '../src/resources/history.js';
import { dotted, dottedName, resKey, resKeys } from '../src/resources/names.js';
import { DEFAULT_SETTINGS, settings } from '../src/resources/options.js';
import { blockedKeys, sanitize, type LockRow } from '../src/resources/rules.js';
import { noteHeld, noteReleased, releaseAllHeld, shutdownListener, type Holding } from '../src/resources/shutdown.js';

const k = (key: string) => resKey(key, 'key');

function lock(key: string, holder: string, mode: LockRow['mode'], live = true): LockRow {
  return { id: k(key).id, holder, mode, live };
}

describe('resources rules', () => {
  const present = new Set(['in', 'out'].map((x) => k(x).id));

  it('gives each blocked key one reason, in jobs.py order', () => {
    const state = { present, locks: [lock('out', 'B', 'writer'), lock('in', 'C', 'writer')] };
    expect(blockedKeys([k('in'), k('nope')], [k('out')], state, 'A', false)).toEqual([
      { key: 'in', reason: 'input_missing' },
      { key: 'nope', reason: 'input_missing' },
      { key: 'out', reason: 'output_exists' },
    ]);
    expect(blockedKeys([], [k('out')], state, 'A', true)).toEqual([{ key: 'out', reason: 'output_locked' }]);
    expect(blockedKeys([], [k('in')], { present, locks: [lock('in', 'B', 'reader')] }, 'A', true)).toEqual([{ key: 'in', reason: 'output_used' }]);
  });

  it('ignores expired locks and the caller’s own locks', () => {
    const state = { present, locks: [lock('out', 'B', 'writer', false), lock('in', 'A', 'writer')] };
    expect(blockedKeys([k('in')], [k('out')], state, 'A', true)).toEqual([]);
  });

  it('lets readers share an input', () => {
    const state = { present, locks: [lock('in', 'B', 'reader'), lock('in', 'C', 'reader')] };
    expect(blockedKeys([k('in')], [], state, 'A', true)).toEqual([]);
  });
});

describe('resources history names', () => {
  it('replaces runs that start with a digit by *', () => {
    expect(sanitize('blah.6213')).toBe('blah.*');
    expect(sanitize('foo.bar.2016-09-01')).toBe('foo.bar.*');
    expect(sanitize('other.1456282826')).toBe('other.*');
    expect(sanitize('a-b.x-1-2.y')).toBe('a-b.x-*.y');
  });

  it('skips a job whose keys all start with test., and a job with no keys', () => {
    expect(flowEdges('j', ['test.a'], ['test.b'])).toEqual([]);
    expect(flowEdges('j', [], [])).toEqual([]);
    expect(
      flowEdges('job.7', ['test.a'], ['b.2024'])
        .map((e) => `${e.kind} ${e.src} -> ${e.dst}`)
        .sort(),
    ).toEqual(['input test.a -> job.*', 'output job.* -> b.*']);
  });

  it('collapses keys that sanitize alike into one edge', () => {
    expect(flowEdges('j', ['in.1', 'in.2'], []).length).toBe(1);
  });
});

describe('dotted names', () => {
  it('builds names like jobs.py NG', () => {
    const n = dotted.reporting!.byPartner!['2024-01-01']!;
    expect(String(n)).toBe('reporting.byPartner.2024-01-01');
    expect(`${dotted.a!('b c')!.d!}`).toBe('a.b c.d');
    expect(JSON.stringify({ n })).toBe('{"n":"reporting.byPartner.2024-01-01"}');
    expect(resKey(n, 'key').key).toBe('reporting.byPartner.2024-01-01');
    expect((dotted as unknown as { then?: unknown }).then).toBeUndefined();
    expect(dottedName('a', 1, 'b')).toBe('a.1.b');
    expect(() => dottedName()).toThrow(TaskrowError);
  });

  it('drops repeated keys and rejects bad ones naming the position', () => {
    expect(resKeys(['a', 'b', 'a'], 'input').map((x) => x.key)).toEqual(['a', 'b']);
    expect(() => resKeys(['a', ''], 'input')).toThrow(/input #1/);
  });
});

describe('resources settings', () => {
  it('validates each field and keeps defaults', () => {
    expect(settings(DEFAULT_SETTINGS, { lease: 500 }, 'acquire()')).toEqual({ ...DEFAULT_SETTINGS, lease: 500 });
    for (const bad of [{ lease: 0 }, { lease: 0.5 }, { lease: -1000 }, { wait: Number.NaN }, { wait: -1000 }, { outputTtl: 0 }, { overwrite: 1 }]) {
      expect(() => settings(DEFAULT_SETTINGS, bad as object, 'acquire()')).toThrow(TaskrowError);
    }
    expect(settings(DEFAULT_SETTINGS, { outputTtl: null }, 'x').outputTtl).toBeNull();
  });
});

describe('shutdown registry', () => {
  it('listens only while something is held, and releases everything on request', async () => {
    const base = process.listenerCount('SIGTERM');
    await releaseAllHeld(); // nothing held: resolves, and must not leave a stale pass behind
    const released: string[] = [];
    const holding = (name: string): Holding => {
      const h: Holding = {
        releaseForShutdown: async () => {
          released.push(name);
          noteReleased(h);
        },
      };
      return h;
    };
    const [a, b] = [holding('a'), holding('b')];
    noteHeld(a);
    noteHeld(b);
    expect(process.listenerCount('SIGTERM')).toBe(base + 1);
    expect(shutdownListener('SIGINT')).toBeDefined();
    await releaseAllHeld();
    expect(released.sort()).toEqual(['a', 'b']);
    expect(process.listenerCount('SIGTERM')).toBe(base);
    expect(shutdownListener('beforeExit')).toBeUndefined();
    noteHeld(a);
    await releaseAllHeld();
    expect(released).toEqual(['a', 'b', 'a']);
    expect(process.listenerCount('SIGTERM')).toBe(base);
  });
});
