import type { DoctorCheck, DoctorReport } from '@taskrow/core';
import { parse } from '../args.js';
import { connect } from '../connect.js';
import { UsageError } from '../errors.js';
import type { Command } from './command.js';

/** How each status is printed: a fixed width, so the names line up. */
const LABEL: Readonly<Record<DoctorCheck['status'], string>> = { ok: 'OK   ', warn: 'WARN ', fail: 'FAIL ', skipped: 'SKIP ' };

/** The report as lines a person reads: `OK    name  summary`, then an indented `fix:` line. */
export function doctorLines(report: DoctorReport): string {
  const width = Math.max(...report.checks.map((c) => c.id.length));
  const lines = report.checks.flatMap((c) => [`${LABEL[c.status]} ${c.id.padEnd(width)}  ${c.summary}`, ...(c.fix ? [`      fix: ${c.fix}`] : [])]);
  return `${lines.join('\n')}\n`;
}

/**
 * `taskrow doctor`: runs `tr.doctor()` (read-only) and prints one line per check, or the report
 * with `--json`. Exit 0 when no check failed, 1 when any did.
 */
export const doctorCommand: Command = async (argv, out) => {
  const { values, positionals } = parse(argv);
  if (positionals.length > 0) throw new UsageError(`doctor takes no arguments, got ${JSON.stringify(positionals[0])}`);
  const conn = await connect(values);
  try {
    const report = await conn.tr.doctor();
    await out.write(values['json'] ? `${JSON.stringify(report)}\n` : doctorLines(report));
    return report.checks.some((c) => c.status === 'fail') ? 1 : 0;
  } finally {
    await conn.close();
  }
};
