import { table } from '../tables.js';

/** The receipts table under one prefix (see `receipts.ts`). */
export function receiptsTable(prefix: string): string {
  return table(prefix, 'receipts');
}
