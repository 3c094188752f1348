import { table } from '../tables.js';

/** The Resources tables under one prefix. */
export interface ResourcesTables {
  /** key digest -> key, whether and until when it exists (was produced as an output). */
  readonly keys: string;
  /** (key digest, holder) -> reader or writer lock with a lease. */
  readonly locks: string;
  /** holder -> job name, owner, lease: the running jobs. */
  readonly jobs: string;
  /** Flow history: sanitized `input -> job` and `job -> output` edges with a last-seen time. */
  readonly edges: string;
}

export function resourcesTables(prefix: string): ResourcesTables {
  return {
    keys: table(prefix, 'resources'),
    locks: table(prefix, 'resource_locks'),
    jobs: table(prefix, 'resource_jobs'),
    edges: table(prefix, 'resource_edges'),
  };
}
