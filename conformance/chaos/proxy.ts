import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A loopback TCP proxy for fault tests, with no dependencies. Every connection it accepts is
 * forwarded to one upstream server, and each can be switched at run time (or all at once) to:
 * - `forward`: bytes pass both ways;
 * - `blackhole`: bytes are dropped both ways and neither socket is closed (no FIN, no RST), as
 *   behind a dead switch or a frozen VM: the client hears nothing, ever;
 * and the proxy as a whole can `refuse` new connections (reset at once) while old ones go on.
 *
 * It also understands the MySQL client protocol one way, client to server (3-byte length,
 * sequence number, payload; a command is a packet of sequence 0; COM_QUERY is 0x03 then the SQL
 * text), to lose the reply of a COMMIT: the COMMIT reaches the server, which commits, and its
 * reply never reaches the client, which either loses its connection (`close`) or hears nothing
 * more on it (`silent`). Which COMMITs lose their reply is deterministic: the next `count` ones,
 * or every `every`-th one; the counters say how many were seen and how many replies were lost.
 */

/** What a connection does with its bytes. */
export type ProxyMode = 'forward' | 'blackhole';

/** How a COMMIT whose reply is lost looks to the client. */
export type LostReply = 'close' | 'silent';

/** Which statements lose their reply, and what the client then sees. */
export interface LoseReplies {
  /** The next `count` matching statements lose their reply (default 1 when `every` is not given). */
  readonly count?: number;
  /** Every `every`-th matching statement loses its reply, with no end (1: all of them). */
  readonly every?: number;
  readonly then: LostReply;
  /** Which COM_QUERY texts count; default a `COMMIT` or `COMMIT AND CHAIN` (case-insensitive, trimmed). */
  readonly match?: (sql: string) => boolean;
  /**
   * Only statements of a transaction (since the last BEGIN / COMMIT / ROLLBACK on that connection)
   * in which a statement matched this count, e.g. `/SKIP LOCKED/` for the COMMIT of a claim.
   */
  readonly within?: RegExp;
  /**
   * A statement outside any transaction (autocommit: it commits on its own) matching this counts
   * too, e.g. `/INSERT INTO .*queue_jobs/` for a one-statement enqueue.
   */
  readonly autocommit?: RegExp;
}

/** Counters since the proxy started. */
export interface ProxyCounters {
  connections: number;
  refused: number;
  /** Matching statements (COMMITs by default) seen going to the server. */
  commits: number;
  /** Of those, replies dropped. */
  lostReplies: number;
  /** Bytes dropped by blackholed connections, both ways. */
  blackholedBytes: number;
}

/** One proxied connection. */
export interface ProxyConnection {
  readonly id: number;
  readonly mode: ProxyMode;
  setMode(mode: ProxyMode): void;
  /** Ends both sockets at once (RST to both sides). */
  destroy(): void;
}

/** A running proxy. */
export interface Proxy {
  readonly port: number;
  readonly counters: Readonly<ProxyCounters>;
  /** Open connections, oldest first. */
  readonly connections: readonly ProxyConnection[];
  /** The mode of every open connection and of every connection accepted from now on. */
  setMode(mode: ProxyMode): void;
  /** While true, new connections are reset as soon as they arrive; open ones go on. */
  refuse(on: boolean): void;
  /** Arms reply loss for matching statements (replaces an earlier arming); `null` disarms it. */
  loseReplies(rule: LoseReplies | null): void;
  /** `url` with its host and port replaced by this proxy's. */
  url(url: string): string;
  /** Stops listening and destroys every connection. */
  close(): Promise<void>;
}

const COM_QUERY = 0x03;
const COM_STMT_PREPARE = 0x16;
/** Longest statement text kept to match `within` against. */
const TEXT_BYTES = 4096;
/** A COMMIT, or a `COMMIT AND CHAIN` (whose reply is its commit's too; a new transaction follows it). */
const isCommit = (sql: string): boolean => /^commit(\s+and\s+chain)?$/i.test(sql.trim());

/** Starts a proxy on 127.0.0.1 (port 0: the kernel picks one) to `target`. */
export async function startProxy(target: { host: string; port: number }, port = 0): Promise<Proxy> {
  const counters: ProxyCounters = { connections: 0, refused: 0, commits: 0, lostReplies: 0, blackholedBytes: 0 };
  const open = new Set<Conn>();
  let globalMode: ProxyMode = 'forward';
  let refusing = false;
  let rule: (LoseReplies & { left: number }) | null = null;
  let nextId = 1;

  /** Decides whether the matching statement just seen loses its reply. */
  let eligible = 0;
  const takesLoss = (): boolean => {
    eligible += 1;
    if (!rule) return false;
    if (rule.every !== undefined) return (eligible - rule.left) % rule.every === 0;
    if (rule.left <= 0) return false;
    rule.left -= 1;
    return true;
  };

  const server: Server = createServer({ noDelay: true }, (client) => {
    if (refusing) {
      counters.refused += 1;
      client.resetAndDestroy();
      return;
    }
    counters.connections += 1;
    const conn = new Conn(nextId++, client, connect({ host: target.host, port: target.port, noDelay: true }), globalMode, counters);
    conn.onCommand = (sql, tx, inTx) => {
      const alone = !inTx && rule?.autocommit?.test(sql) === true;
      if (!alone && !(rule?.match ?? isCommit)(sql)) return undefined;
      counters.commits += 1;
      if (!rule) return undefined;
      if (!alone && rule.within && !tx.some((t) => rule!.within!.test(t))) return undefined;
      return takesLoss() ? rule.then : undefined;
    };
    conn.onClose = () => open.delete(conn);
    open.add(conn);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const addr = server.address();
  const actual = typeof addr === 'object' && addr ? addr.port : port;
  return {
    port: actual,
    counters,
    get connections() {
      return [...open];
    },
    setMode(mode) {
      globalMode = mode;
      for (const c of open) c.setMode(mode);
    },
    refuse(on) {
      refusing = on;
    },
    loseReplies(r) {
      if (r && r.count !== undefined && r.every !== undefined) throw new Error('loseReplies: give count or every, not both');
      // For `every`, `left` holds the count at arming, so the k-th matching statement from now is the first.
      rule = r ? { ...r, left: r.every !== undefined ? eligible : (r.count ?? 1) } : null;
    },
    url(u) {
      const parsed = new URL(u);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(actual);
      return parsed.toString();
    },
    async close() {
      for (const c of open) c.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** One client socket and its upstream socket. */
class Conn implements ProxyConnection {
  mode: ProxyMode;
  onCommand: (sql: string, tx: readonly string[], inTx: boolean) => LostReply | undefined = () => undefined;
  /** Between BEGIN / START TRANSACTION and COMMIT / ROLLBACK. */
  private inTx = false;
  /** Statement texts of the open transaction on this connection. */
  private tx: string[] = [];
  onClose: () => void = () => undefined;
  /** Set once a reply is being lost: what to do when the server's bytes arrive. */
  private losing: LostReply | undefined;
  private pending: Buffer = Buffer.alloc(0);
  private closed = false;

  constructor(
    readonly id: number,
    private readonly client: Socket,
    private readonly upstream: Socket,
    mode: ProxyMode,
    private readonly counters: ProxyCounters,
  ) {
    this.mode = mode;
    client.on('data', (d: Buffer) => this.fromClient(d));
    upstream.on('data', (d: Buffer) => this.fromServer(d));
    for (const s of [client, upstream]) {
      s.on('error', () => this.destroy());
      s.on('close', () => this.destroy());
    }
  }

  setMode(mode: ProxyMode): void {
    this.mode = mode;
  }

  destroy(): void {
    if (this.closed) return;
    this.closed = true;
    this.client.destroy();
    this.upstream.destroy();
    this.onClose();
  }

  private fromClient(d: Buffer): void {
    if (this.mode === 'blackhole' || this.losing === 'silent') {
      this.counters.blackholedBytes += d.length;
      return;
    }
    // Forward packet by packet, so that a COMMIT is seen before the bytes that follow it.
    this.pending = this.pending.length ? Buffer.concat([this.pending, d]) : d;
    let at = 0;
    while (this.pending.length - at >= 4) {
      const len = this.pending.readUIntLE(at, 3);
      if (this.pending.length - at < 4 + len) break;
      const seq = this.pending[at + 3];
      const command = this.pending[at + 4];
      if (seq === 0 && len > 0 && (command === COM_QUERY || command === COM_STMT_PREPARE)) {
        // With CLIENT_QUERY_ATTRIBUTES (MySQL 8.0.23+), COM_QUERY's text follows a parameter count
        // and a parameter set count (0x00 0x01 when, as here, no attribute is sent): skip them.
        // biome-ignore lint/suspicious/noControlCharactersInRegex: the bytes before the text are binary.
        this.command(this.pending.toString('utf8', at + 5, at + 4 + Math.min(len, TEXT_BYTES)).replace(/^[\x00-\x1f]+/, ''));
      }
      at += 4 + len;
    }
    if (at > 0) this.upstream.write(this.pending.subarray(0, at));
    this.pending = this.pending.subarray(at);
  }

  /** Sees one statement on its way to the server: records it, and arms a reply loss if it is one. */
  private command(sql: string): void {
    const lost = this.onCommand(sql, this.tx, this.inTx);
    if (lost) this.losing = lost;
    if (/^\s*(commit|rollback|begin|start transaction)\b/i.test(sql)) {
      this.tx = [];
      this.inTx = /^\s*(begin|start)|\band\s+chain\s*$/i.test(sql);
    } else {
      this.tx.push(sql);
      if (this.tx.length > 32) this.tx.shift(); // autocommit statements: keep only the latest
    }
  }

  private fromServer(d: Buffer): void {
    if (this.mode === 'blackhole' || this.losing === 'silent') {
      this.counters.blackholedBytes += d.length;
      if (this.losing === 'silent' && this.mode !== 'blackhole') {
        this.counters.lostReplies += 1;
        this.mode = 'blackhole'; // the reply is gone, and so is everything after it
      }
      return;
    }
    if (this.losing === 'close') {
      // The server answered, so it has committed: the client loses the connection instead.
      this.counters.lostReplies += 1;
      this.destroy();
      return;
    }
    this.client.write(d);
  }
}
