import { table } from '../tables.js';

/** The schedules table under `prefix` (validated by the caller). */
export const schedulesTable = (prefix: string): string => table(prefix, 'queue_schedules');
