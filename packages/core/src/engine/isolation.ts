import { invalid } from '../errors.js';
import type { IsolationLevel } from '../port.js';

/** The only isolation statements taskrow sends: one per `IsolationLevel`, nothing spliced. */
const SET_ISOLATION: Readonly<Record<IsolationLevel, string>> = Object.freeze({
  'READ UNCOMMITTED': 'SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED',
  'READ COMMITTED': 'SET TRANSACTION ISOLATION LEVEL READ COMMITTED',
  'REPEATABLE READ': 'SET TRANSACTION ISOLATION LEVEL REPEATABLE READ',
});

/** The statement that sets the next transaction's isolation level; rejects any other value. */
export function isolationStatement(level: IsolationLevel): string {
  if (!Object.hasOwn(SET_ISOLATION, level)) {
    throw invalid(`unknown isolation level ${JSON.stringify(level)}: expected READ UNCOMMITTED, READ COMMITTED or REPEATABLE READ`);
  }
  return SET_ISOLATION[level];
}
