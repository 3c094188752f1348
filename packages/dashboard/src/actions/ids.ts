import { jobId } from '../pages/job.js';
import { Refused } from '../refused.js';

/** Most jobs one selection may hold (a page of the queue lists at most 1,000). */
export const MAX_SELECTED = 1000;

/**
 * The ids of a form's `id` fields, or undefined when it has none. Every id is validated (400 for
 * a bad one, before the database is read), duplicates are dropped, and more than `MAX_SELECTED`
 * fields are refused with 400.
 */
export function idsOf(form: URLSearchParams): number[] | undefined {
  const texts = form.getAll('id');
  if (texts.length === 0) return undefined;
  if (texts.length > MAX_SELECTED) throw new Refused(400, `select at most ${MAX_SELECTED} jobs at once, got ${texts.length}`);
  return [...new Set(texts.map(jobId))];
}

/** The ids of a form's `id` fields as `idsOf` reads them; a form with none is refused with 400. */
export function selectedIds(form: URLSearchParams): number[] {
  const ids = idsOf(form);
  if (ids === undefined) throw new Refused(400, 'no job selected: tick the jobs to act on first');
  return ids;
}
