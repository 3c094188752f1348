import type { Executor } from '../../engine/executor.js';
import type { QueueSettings } from '../model/options.js';
import type { QueueTables } from '../model/tables.js';

/** What the ack functions share. */
export interface AckContext {
  readonly exec: Executor;
  readonly t: QueueTables;
  readonly queue: string;
  readonly settings: QueueSettings;
}
