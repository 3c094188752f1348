/** The two server families taskrow supports. */
export type Engine = 'mysql' | 'mariadb';

/** Where a server came from, in the order `startServer` tries them. */
export type ServerSource = 'env' | 'container' | 'local';

/** Durability of a server this package starts. `relaxed` is for tests and stated by benchmarks. */
export type Durability = 'relaxed' | 'full';

/** A running server, ready for connections. */
export interface ServerHandle {
  /** `mysql://user:password@host:port/database`; the database exists. */
  readonly url: string;
  readonly engine: Engine;
  /** `major.minor.patch` as reported by `SELECT VERSION()`. */
  readonly version: string;
  /** The full `SELECT VERSION()` string, e.g. `10.11.19-MariaDB-0+deb12u1`. */
  readonly versionString: string;
  readonly source: ServerSource;
  /** The pid of the server process (local servers only; a new one after `restart()`). */
  readonly pid?: number;
  /** The private data directory on this machine (local servers only); removed by `stop()`. */
  readonly dataDir?: string;
  /**
   * Stops what this call started: the process by the pid it was started with (never by name), or
   * the container. MUST NOT touch a server taken from the environment. Safe to call twice.
   */
  stop(): Promise<void>;
  /**
   * (Local servers only.) Ends the server process with SIGKILL, as a crash would, leaving its data
   * directory and port as they are; resolves once the process has exited.
   */
  kill?(): Promise<void>;
  /**
   * (Local servers only.) SIGKILLs the server if it still runs, starts it again on the same data
   * directory, port and settings (crash recovery included), and resolves once it answers queries.
   * MUST reject after `stop()`.
   */
  restart?(): Promise<void>;
}

/** What `startServer` is asked for. */
export interface StartServerOptions {
  readonly engine: Engine;
  /** `major.minor` (or a longer prefix) the server's version must start with; omitted: the newest available. */
  readonly version?: string;
  /**
   * Default `relaxed` (no fsync per commit, no doublewrite); `full` sets
   * `innodb_flush_log_at_trx_commit=1`, `innodb_doublewrite=ON` and `sync_binlog=1`. Only for
   * servers this package starts.
   */
  readonly durability?: Durability;
  /**
   * Loopback port for a local server (default: a free one the kernel picks). For restart tests, pick
   * one below the ephemeral range (`freePortBelowEphemeral()`): a client reconnecting while the server
   * is down could otherwise be given that port as its own source port and connect to itself.
   */
  readonly port?: number;
  /** Sources to try, in this order. Default `['env', 'container', 'local']`. */
  readonly sources?: readonly ServerSource[];
}

/** A server target handed to test projects: serialisable, no methods. */
export interface ServerTarget {
  readonly engine: Engine;
  readonly version: string;
  readonly versionString: string;
  readonly url: string;
  readonly source: ServerSource;
}
