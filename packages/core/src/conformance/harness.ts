import type { Taskrow } from '../taskrow.js';

/** A server the kit runs against. */
export interface ConformanceTarget {
  readonly engine: 'mysql' | 'mariadb';
  /** `major.minor.patch`. */
  readonly version: string;
  readonly url: string;
  /**
   * Set by a harness whose sessions are spread over the writable nodes of a cluster (Galera,
   * multi-primary Group Replication). Row locks are local to a node there: a lock one session holds
   * neither makes a session on another node wait nor is skipped by it (the second writer of a row
   * fails at COMMIT instead, and taskrow runs it again). The cases about how one session's row locks
   * affect another's (lock waits, SKIP LOCKED) then run with every session on one node
   * (`HarnessOpenOptions.oneNode`), and the kit prints which cases did.
   */
  readonly multiWriterCluster?: boolean;
  /**
   * Set by a harness whose commits are certified by a group (Galera, Group Replication in either
   * mode): a commit waits for the group, and on a loaded machine may stall for seconds. Cases that
   * need a worker to keep extending a lease then give it a longer one.
   */
  readonly certifiedCommits?: boolean;
}

/** How the kit asks for a session. */
export interface HarnessOpenOptions {
  readonly prefix: string;
  /**
   * Put the session's taskrow client, its probe and every client of `openClients` on one node. Only
   * a cluster harness reads it (a single server is one node); the kit sets it only for a target with
   * `multiWriterCluster`.
   */
  readonly oneNode?: boolean;
}

/** Plain SQL on its own connection: the side channel every write is verified through. */
export interface Probe {
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
}

/** What a harness opens for one target. The kit closes it. */
export interface HarnessSession<Tx> {
  /** taskrow over a fresh client of the adapter (a pool or the adapter's usual shared client). */
  readonly taskrow: Taskrow<Tx>;
  readonly probe: Probe;
  /**
   * Opens a transaction with the driver's own API, runs `fn` with the driver's transaction object,
   * then commits or rolls back as `outcome` says.
   */
  withDriverTransaction<T>(outcome: 'commit' | 'rollback', fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** `n` taskrows, each over its own single connection: `n` separate sessions on the server. */
  openClients(n: number): Promise<{ clients: Taskrow<Tx>[]; close(): Promise<void> }>;
  /** Kills (server-side, with KILL) every connection `taskrow`'s client holds right now. */
  killClientConnections(): Promise<number>;
  /** Ends the driver client under `taskrow` (pool.end(), knex.destroy(), ...). */
  endClient(): Promise<void>;
  close(): Promise<void>;
}

/** How an adapter plugs into the kit. */
export interface ConformanceHarness<Tx> {
  /** The adapter's name, shown in every suite name. */
  readonly adapter: string;
  readonly targets: readonly ConformanceTarget[];
  /** Opens a session on `target` whose taskrow uses table prefix `prefix`. */
  open(target: ConformanceTarget, options: HarnessOpenOptions): Promise<HarnessSession<Tx>>;
}

/** `mariadb 10.11`: how every suite name starts, so reports group by server. */
export function targetLabel(t: ConformanceTarget): string {
  return `${t.engine} ${t.version.split('.').slice(0, 2).join('.')}`;
}

let counter = 0;
/** A name no other test uses: `prefix` + process id + counter + random. */
export function freshName(prefix = 'n'): string {
  counter += 1;
  return `${prefix}${process.pid.toString(36)}${counter.toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}

/** Drops every table and procedure under `prefix` through the probe. */
export async function dropPrefix(probe: Probe, prefix: string): Promise<void> {
  const like = `${prefix.replace(/_/g, '\\_')}%`;
  const rows = await probe.query<{ t: string }>('SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?', [
    like,
  ]);
  for (const r of rows) await probe.query(`DROP TABLE IF EXISTS \`${r.t}\``);
  const routines = await probe.query<{ r: string }>(
    "SELECT routine_name AS r FROM information_schema.routines WHERE routine_schema = DATABASE() AND routine_type = 'PROCEDURE' AND routine_name LIKE ?",
    [like],
  );
  for (const r of routines) await probe.query(`DROP PROCEDURE IF EXISTS \`${r.r}\``);
}
