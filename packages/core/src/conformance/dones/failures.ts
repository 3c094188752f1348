import { expect, it } from 'vitest';
import { TaskrowError } from '../../errors.js';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { probeKeys } from './probe.js';

/** Lost connections are retried; a closed client gives a clear error. */
export function donesFailures<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('retries a batch whose connections were killed by the server, and applies it fully', async () => {
    const c = ctx();
    const extra = await c.openExtra();
    const ns = freshName('ns');
    const d = extra.taskrow.dones(ns);
    await d.mark('warm-up'); // the client now holds at least one open connection
    expect(await extra.killClientConnections()).toBeGreaterThan(0);
    const keys = Array.from({ length: 5000 }, (_, i) => `after-kill-${i}`);
    expect(await d.mark(keys)).toBe(5000);
    expect((await probeKeys(c.session.probe, c.prefix, ns)).length).toBe(5001);
  });

  it('fails with CLIENT_CLOSED once the application ended its client, and writes nothing', async () => {
    const c = ctx();
    const extra = await c.openExtra();
    const ns = freshName('ns');
    await extra.endClient();
    const err = await extra.taskrow
      .dones(ns)
      .mark('x')
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(TaskrowError);
    expect((err as TaskrowError).code).toBe('CLIENT_CLOSED');
    expect(await probeKeys(c.session.probe, c.prefix, ns)).toEqual([]);
  });
}
