import { createServer } from 'node:http';
import { dashboardHandler } from '@taskrow/dashboard';
import { intFlag, parse } from '../args.js';
import { connect } from '../connect.js';
import { UsageError } from '../errors.js';
import type { Command } from './command.js';

/** The environment variable that may hold the actions token instead of `--actions-token`. */
export const TOKEN_ENV = 'TASKROW_DASHBOARD_TOKEN';

/**
 * `taskrow dashboard`: serves the dashboard (and `/metrics`) on `--host` (default 127.0.0.1) and
 * `--port` (default 8089; 0 picks a free one) until SIGINT or SIGTERM. Prints its address on
 * stdout. Actions are on only with `--actions-token` or `TASKROW_DASHBOARD_TOKEN`. It answers
 * requests addressed to localhost or an IP address, and to the names of `--allowed-host`
 * (comma-separated; `.example.com` allows its subdomains).
 */
export const dashboardCommand: Command = async (argv, out) => {
  const { values, positionals } = parse(argv, {
    port: { type: 'string' },
    host: { type: 'string' },
    'actions-token': { type: 'string' },
    'allowed-host': { type: 'string' },
  });
  if (positionals.length > 0) throw new UsageError(`dashboard takes no arguments, got ${JSON.stringify(positionals[0])}`);
  const port = intFlag(values, 'port', 8089, 0, 65535);
  const host = (values['host'] as string | undefined) ?? '127.0.0.1';
  const token = (values['actions-token'] as string | undefined) ?? process.env[TOKEN_ENV];
  const conn = await connect(values);
  try {
    const names =
      values['allowed-host'] === undefined
        ? []
        : String(values['allowed-host'])
            .split(',')
            .filter((n) => n !== '');
    const handler = dashboardHandler({ taskrow: conn.tr, actions: token ? { token } : false, ...(names.length > 0 ? { allowedHosts: names } : {}) });
    const server = createServer(handler);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    const bound = server.address() as { port: number };
    const shown = host.includes(':') ? `[${host}]` : host;
    await out.write(`taskrow dashboard at http://${shown}:${bound.port}/ (actions ${token ? 'on' : 'off'}); Ctrl-C stops it\n`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return 0;
  } finally {
    await conn.close();
  }
};
