/**
 * The Queue's stored procedures: what one is (`Routine`), how `migrate()` installs them by content
 * (`installRoutines`), and how a caller CALLs one or finds it missing and takes the path without it
 * (`call.ts`). Each routine's text lives beside the code that calls it; `queue/procedures.ts` lists them.
 */
export { installRoutines, routineStatements, type RoutinesResult } from './install.js';
export type { Routine } from './routine.js';
