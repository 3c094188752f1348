import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** A TCP port on 127.0.0.1 that was free a moment ago (the kernel picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => (port ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

/** The kernel's ephemeral port range (`/proc/sys/net/ipv4/ip_local_port_range`), or Linux's default. */
export function ephemeralRange(): [number, number] {
  try {
    const [lo, hi] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (lo && hi) return [lo, hi];
  } catch {
    // not Linux: assume its default
  }
  return [32768, 60999];
}

/** Resolves whether `port` on 127.0.0.1 can be bound right now. */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/**
 * `n` consecutive ports on 127.0.0.1 below the kernel's ephemeral range (from 20000 up to its
 * start) that were free a moment ago: no outgoing connection is ever given one as a source port,
 * so a client reconnecting to a server (or cluster node) that is down cannot connect to itself
 * there, and a restarted server finds its port free. Rejects after 200 tries.
 */
export async function lowFreePorts(n: number): Promise<number[]> {
  const top = ephemeralRange()[0];
  const bottom = Math.min(20000, top - 1000);
  for (let i = 0; i < 200; i++) {
    const base = bottom + Math.floor(Math.random() * (top - bottom - n));
    const ports = Array.from({ length: n }, (_, k) => base + k);
    if ((await Promise.all(ports.map(bindable))).every(Boolean)) return ports;
  }
  throw new Error(`no ${n} consecutive free ports between ${bottom} and ${top}`);
}

/** One port as `lowFreePorts` finds them. */
export async function freePortBelowEphemeral(): Promise<number> {
  return (await lowFreePorts(1))[0]!;
}
