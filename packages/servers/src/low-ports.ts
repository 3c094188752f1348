import { createServer } from 'node:net';

/** Lowest and highest port handed out: below the kernel's ephemeral range (32768-60999 on Linux). */
const LOW = 20_000;
const HIGH = 32_000;

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/**
 * `n` consecutive loopback ports that were free a moment ago, below the ephemeral range: a node
 * restarted on its old port can never find it taken by a client's outgoing connection.
 */
export async function lowFreePorts(n: number): Promise<number[]> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = LOW + Math.floor(Math.random() * (HIGH - LOW - n));
    const ports = Array.from({ length: n }, (_, i) => base + i);
    const free = await Promise.all(ports.map(bindable));
    if (free.every(Boolean)) return ports;
  }
  throw new Error(`no ${n} consecutive free loopback ports between ${LOW} and ${HIGH}`);
}
