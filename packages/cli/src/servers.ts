import type * as Servers from '@taskrow/servers';

/** The one package name `--embedded` and `demo` need; an optional peer of @taskrow/cli. */
const SERVERS = '@taskrow/servers';

/**
 * Loads @taskrow/servers for `--embedded` and `demo` only, so `taskrow` with `--url` works without
 * it (and without its container and SSH dependencies). MUST reject with a message saying how to
 * install it when it is absent; any other load failure is passed through.
 */
export async function loadServers(): Promise<typeof Servers> {
  try {
    return (await import(SERVERS)) as typeof Servers;
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown };
    if (e.code === 'ERR_MODULE_NOT_FOUND' && String(e.message).includes(`'${SERVERS}'`)) {
      throw new Error(
        `--embedded and demo start a local server through ${SERVERS}, which is not installed: ` +
          `install it next to the CLI (npm install -g ${SERVERS}, or npm install ${SERVERS} in your project), ` +
          'or pass --url mysql://user:password@host:port/database',
        { cause: err },
      );
    }
    throw err;
  }
}
