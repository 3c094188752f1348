import { PHASE } from './tables.js';

/**
 * The fencing check, written once for every fenced write: the client's acks (`fence` in
 * `settle/ack.ts`), a claim's look for the jobs of its lost run (`claim/claim.ts`) and the replay
 * of a leased enqueue (`handoff/local-hand.ts`). True only while the job row is running in
 * `queue` under the fencing token `token`, so a write that carries it MUST NOT touch a job whose
 * lease passed to another claimer. `queue` and `token` are SQL: `?` each in a client's statement
 * (the queue's parameter first), procedure parameters or columns in a routine; `alias` qualifies
 * the row's columns (`j.`).
 */
export const heldSql = (queue: string, token: string, alias = ''): string =>
  `${alias}\`queue\` = ${queue} AND ${alias}\`phase\` = ${PHASE.running} AND ${alias}\`token\` = ${token}`;
