import type { Durability, Engine } from './types.js';

/**
 * The cluster shapes this package starts: MariaDB Galera (every node a primary), MySQL Group
 * Replication in multi-primary mode, and Group Replication in single-primary mode.
 */
export type ClusterKind = 'galera' | 'group-replication' | 'group-replication-single-primary';

/** What `startCluster` is asked for. */
export interface StartClusterOptions {
  readonly kind: ClusterKind;
  /** Default `relaxed`, as for single servers. */
  readonly durability?: Durability;
  /**
   * Every session reads what the cluster committed before its statement, whichever node wrote it:
   * Galera `wsrep_sync_wait=1`, Group Replication `group_replication_consistency=BEFORE`. Default
   * false (the servers' own defaults: a read on one node may miss a commit just made on another).
   */
  readonly readYourWrites?: boolean;
}

/** A cluster handed to test projects: serialisable, no methods. */
export interface ClusterTarget {
  readonly kind: ClusterKind;
  readonly engine: Engine;
  /** `major.minor.patch` of the nodes. */
  readonly version: string;
  readonly versionString: string;
  readonly source: 'local';
  /** The first node's URL (the primary on single-primary). */
  readonly url: string;
  /** One `mysql://` URL per node, in node order; on single-primary the primary is first. */
  readonly urls: readonly string[];
  /** Each node's error log on this host, in node order (gone once the cluster is stopped). */
  readonly errorLogs: readonly string[];
}

/** A running cluster: every node a member and ready for connections. */
export interface ClusterHandle extends ClusterTarget {
  /** The pid each node runs as right now (undefined while a node is down). */
  pids(): readonly (number | undefined)[];
  /** SIGKILLs node `i` (by its pid) and resolves once the process is gone. */
  killNode(i: number): Promise<void>;
  /**
   * Starts node `i` again on its own data directory and ports after `killNode`, and resolves once
   * it is back in the cluster and caught up (Galera: Synced by IST; Group Replication: ONLINE).
   */
  restartNode(i: number): Promise<void>;
  /** Stops every node by its pid and removes their data directories. Safe to call twice. */
  stop(): Promise<void>;
}
