import type { Taskrow } from '@taskrow/core';

/** Payloads that would run script if the dashboard ever wrote a database value as markup. */
export const XSS_PAYLOAD = { note: '<script>window.__xss = 1; alert(1)</script>', img: '<img src=x onerror="window.__xss = 2; alert(2)">' };
export const XSS_ERROR = '<script>window.__xss = 3</script> failed';

export const REGIONS = ['eu', 'us', 'apac'] as const;

/** Makes `n` dead jobs in `queue` (enqueued with one attempt, claimed and failed), resolving to their ids. */
export async function deadJobs(tr: Taskrow, queue: string, n: number, error = 'boom'): Promise<number[]> {
  const q = tr.queue(queue);
  const made = await q.enqueueMany(Array.from({ length: n }, (_, i) => ({ payload: { dead: i }, maxAttempts: 1, priority: -100 })));
  const ids = new Set(made.map((m) => m.id));
  const claimed = (await q.claim({ limit: n, lease: 60_000 })).filter((j) => ids.has(j.id));
  for (const j of claimed) await q.fail(j, error);
  return [...ids];
}

/**
 * A day-parameterised flow per region, as jobs.py users run it: `raw.R.DAY -> ingest.R.DAY ->
 * clean.R.DAY -> report.R.DAY`, and one `summary.DAY` job reading every region's report. The flow
 * history records names with digits replaced by `*`.
 */
export async function flow(tr: Taskrow, days: readonly string[]): Promise<void> {
  const r = tr.resources({ releaseOnExit: false });
  for (const day of days) {
    for (const region of REGIONS) {
      await r.produce([`raw.${region}.${day}`]);
      await r.run(`ingest.${region}.${day}`, { inputs: [`raw.${region}.${day}`], outputs: [`clean.${region}.${day}`] }, () => undefined);
      await r.run(`report.${region}.${day}`, { inputs: [`clean.${region}.${day}`], outputs: [`report.${region}.${day}`] }, () => undefined);
    }
    await r.run(`summary.${day}`, { inputs: REGIONS.map((g) => `report.${g}.${day}`), outputs: [`summary.${day}`] }, () => undefined);
  }
}

/** Enqueues `n` jobs in batches of 1,000, resolving to their ids in order. */
export async function manyJobs(tr: Taskrow, queue: string, n: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i += 1000) {
    const batch = Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({ payload: { n: i + k } }));
    ids.push(...(await tr.queue(queue).enqueueMany(batch)).map((e) => e.id));
  }
  return ids;
}
