/**
 * `tr.doctor()`: read-only checks of the server and the schema for what taskrow needs, each with
 * its status and fix (see `doctor.ts` for the list and docs/operations.md, "taskrow doctor").
 */
export { doctor } from './doctor.js';
export type { DoctorCheck, DoctorReport, DoctorStatus } from './types.js';
