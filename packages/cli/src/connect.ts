import mysql from 'mysql2/promise';
import type { Taskrow } from '@taskrow/core';
import { taskrow, type Mysql2Connection } from '@taskrow/mysql2';
import type { Engine, ServerHandle } from '@taskrow/servers';
import { UsageError } from './errors.js';
import { loadServers } from './servers.js';
import { parseDatabaseUrl, redactUrl } from './url.js';
import type { Parsed } from './args.js';

/** An open connection for one command; `close()` stops everything the command started. */
export interface Connection {
  readonly tr: Taskrow<Mysql2Connection>;
  readonly pool: mysql.Pool;
  readonly url: string;
  close(): Promise<void>;
}

/** How long the first connection may take before the command says the server is unreachable. */
const CONNECT_TIMEOUT_MS = 4000;

/** What mysql2 rejects a connection with. */
interface ConnectError {
  readonly code?: string;
  readonly errno?: number;
  readonly message?: string;
}

/**
 * The message for a first connection that failed, the password hidden: the server refused the
 * user (1045), has no such database (1049), refused the user that database (1044), or did not
 * answer at all.
 */
function connectProblem(e: ConnectError, url: string): string {
  const at = redactUrl(url);
  const u = new URL(url);
  const user = decodeURIComponent(u.username);
  const database = decodeURIComponent(u.pathname.slice(1));
  if (e.errno === 1045) return `authentication failed at ${at}: the server refused user "${user}" with this password (check the user and password in the URL)`;
  if (e.errno === 1049) return `database "${database}" does not exist at ${at} (create it, or name another in the URL)`;
  if (e.errno === 1044) return `user "${user}" may not use database "${database}" at ${at} (grant it, or name another database)`;
  return `cannot reach the database at ${at}: ${e.code ?? ''} ${e.message ?? ''}`.trim();
}

/**
 * Connects from `--url`, `TASKROW_URL` or `--embedded` (a local server started through
 * @taskrow/servers, announced on stderr and stopped by `close()`; MUST NOT attach to a server named
 * by a `TASKROW_<ENGINE>_URL` variable instead). MUST fail within a few seconds
 * with a message naming the (redacted) URL when the server does not answer.
 */
export async function connect(values: Parsed['values'], options: { embeddedByDefault?: boolean } = {}): Promise<Connection> {
  const raw = (values['url'] as string | undefined) ?? process.env['TASKROW_URL'];
  let server: ServerHandle | undefined;
  let url: string;
  if (raw !== undefined && !values['embedded']) {
    url = parseDatabaseUrl(raw);
  } else if (values['embedded'] || options.embeddedByDefault) {
    const engine = (values['engine'] as string | undefined) ?? 'mariadb';
    if (engine !== 'mysql' && engine !== 'mariadb') throw new UsageError(`--engine must be mysql or mariadb, got ${JSON.stringify(engine)}`);
    const { startServer } = await loadServers();
    process.stderr.write(`taskrow: no --url given; starting an embedded ${engine} server through @taskrow/servers...\n`);
    // Started here, never a server named by TASKROW_<ENGINE>_URL: that one is not this command's to start or stop.
    server = await startServer({ engine: engine as Engine, sources: ['container', 'local'] });
    process.stderr.write(
      `taskrow: started ${server.engine} ${server.versionString} (${server.source}) at ${redactUrl(server.url)}${server.pid === undefined ? '' : ` (pid ${server.pid}, data in ${server.dataDir ?? '?'})`}\n`,
    );
    url = server.url;
  } else {
    throw new UsageError('no database: pass --url mysql://user:password@host:port/database, set TASKROW_URL, or use --embedded');
  }
  try {
    const probe = await mysql.createConnection({ uri: url, connectTimeout: CONNECT_TIMEOUT_MS });
    await probe.end();
  } catch (err) {
    await server?.stop();
    throw new Error(connectProblem(err as ConnectError, url));
  }
  const pool = mysql.createPool({ uri: url, connectionLimit: 16, connectTimeout: CONNECT_TIMEOUT_MS });
  try {
    const prefix = values['prefix'] as string | undefined;
    const tr = await taskrow(pool, prefix === undefined ? {} : { prefix });
    return {
      tr,
      pool,
      url,
      async close() {
        await tr.close().catch(() => undefined);
        await pool.end().catch(() => undefined);
        if (server) {
          await server.stop();
          process.stderr.write(`taskrow: stopped the embedded ${server.engine} server\n`);
        }
      },
    };
  } catch (err) {
    await pool.end().catch(() => undefined);
    await server?.stop();
    throw err;
  }
}
