import { inject } from 'vitest';
import type { ServerTarget } from '@taskrow/servers';

/** The servers of this run; a test file that needs a server and gets none MUST fail, not skip. */
export function targets(): ServerTarget[] {
  const list = inject('targets');
  if (!Array.isArray(list) || list.length === 0) throw new Error('no server targets were provided by the global setup');
  return list;
}

/** `mariadb 10.11` — the label that opens every per-server describe block: `<label> · <adapter> · <suite>`. */
export function label(t: ServerTarget): string {
  return `${t.engine} ${t.version.split('.').slice(0, 2).join('.')}`;
}
