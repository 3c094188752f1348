import type { Migration } from '../migration.js';
import { donesDdl, loopDdl, receiptsDdl, resourcesDdl } from './primitives.js';
import { queueDdl } from './queue.js';

/**
 * Schema version 1, the baseline: every table of Dones, Loop (its registry), Queue, Resources and
 * the receipts, as this build uses them. Tables and indexes only: the Queue's stored procedures are
 * installed by content, outside the version history (see `queue/routines`). Later changes to a
 * table are versions 2, 3, ... appended to `MIGRATIONS`.
 */
export const BASELINE: Migration = {
  version: 1,
  name: 'baseline',
  statements: (prefix) => [...donesDdl(prefix), ...loopDdl(prefix), ...queueDdl(prefix), ...resourcesDdl(prefix), ...receiptsDdl(prefix)],
};
