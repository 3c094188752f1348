import net from 'node:net';
import mysql from 'mysql2/promise';

/** A loopback TCP proxy in this process that holds every chunk for `delayMs` in each direction, in order. */
export interface DelayProxy {
  /** `url` with its port pointing at the proxy. */
  readonly url: string;
  close(): Promise<void>;
}

/** Starts a proxy in front of the server of `url`, modelling a database across a network. */
export async function delayProxy(url: string, delayMs: number): Promise<DelayProxy> {
  const target = new URL(url);
  const sockets = new Set<net.Socket>();
  const relay = (from: net.Socket, to: net.Socket): void => {
    let chain = Promise.resolve();
    from.on('data', (chunk) => {
      const due = Date.now() + delayMs;
      chain = chain.then(() => new Promise<void>((r) => setTimeout(r, Math.max(0, due - Date.now())))).then(() => void to.write(chunk));
    });
    from.on('end', () => void chain.then(() => to.end()));
    from.on('error', () => to.destroy());
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    }
    relay(client, upstream);
    relay(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as net.AddressInfo).port);
  return {
    url: proxied.toString(),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The median round trip of `SELECT 1` on `url`, in ms. */
export async function roundTripMs(url: string, samples = 50): Promise<number> {
  const conn = await mysql.createConnection(url);
  try {
    const times: number[] = [];
    for (let i = 0; i < samples; i++) {
      const t0 = process.hrtime.bigint();
      await conn.query('SELECT 1');
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    times.sort((a, b) => a - b);
    return times[samples >> 1]!;
  } finally {
    await conn.end();
  }
}
