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
  /** The pid the server process was started with (local servers only). */
  readonly pid?: number;
  /** The private data directory on this machine (local servers only); removed by `stop()`. */
  readonly dataDir?: string;
  /**
   * Stops what this call started: the process by the pid it was started with (never by name), or
   * the container. MUST NOT touch a server taken from the environment. Safe to call twice.
   */
  stop(): Promise<void>;
}

/** What `startServer` is asked for. */
export interface StartServerOptions {
  readonly engine: Engine;
  /** `major.minor` (or a longer prefix) the server's version must start with; omitted: the newest available. */
  readonly version?: string;
  /** Default `relaxed` (no fsync per commit, no doublewrite); only for servers this package starts. */
  readonly durability?: Durability;
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
