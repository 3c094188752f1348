import { describe, expect, it } from 'vitest';
import { applyMigrationStep, migrationSteps } from '../src/schema/migrate.js';

/** A runner over which the optional step's change fails with `err`; resolves to the statements it ran. */
async function applyOptional(err: unknown): Promise<{ ran: string[]; outcome: 'applied' | 'failed' }> {
  const step = migrationSteps('t_').find((s) => s.optional === true)!;
  const ran: string[] = [];
  const run = async (sql: string): Promise<readonly unknown[]> => {
    ran.push(sql);
    if (step.change.includes(sql)) throw err;
    return [];
  };
  const outcome = await applyMigrationStep(step, run).then(() => 'applied' as const, () => 'failed' as const);
  return { ran, outcome };
}

const recorded = (ran: readonly string[]): boolean => ran.some((s) => s.startsWith('INSERT INTO `t_schema_migrations`'));

describe('applyMigrationStep of an optional change', () => {
  it('records the version when the server refused the change (its driver error, or one the runner wrapped it in)', async () => {
    for (const err of [Object.assign(new Error('denied'), { errno: 1044 }), { original: { errno: 1064 } }, { parent: { errno: 1227 } }, { driverError: { errno: 1142 } }]) {
      const { ran, outcome } = await applyOptional(err);
      expect(outcome).toBe('applied');
      expect(recorded(ran)).toBe(true);
    }
  });

  it('fails, recording nothing, when the connection failed or the error is not a refusal', async () => {
    const notRefusals = [
      Object.assign(new Error('lost'), { code: 'PROTOCOL_CONNECTION_LOST', fatal: true }),
      Object.assign(new Error('reset'), { code: 'ECONNRESET', errno: -104 }),
      Object.assign(new Error('socket closed'), { errno: 45009, sqlState: '08S01' }),
      Object.assign(new Error('gone away'), { errno: 2013 }),
      Object.assign(new Error('killed'), { errno: 1927 }),
      Object.assign(new Error('deadlock'), { errno: 1213 }),
      new Error('no number'),
    ];
    for (const err of notRefusals) {
      const { ran, outcome } = await applyOptional(err);
      expect(outcome, String((err as Error).message)).toBe('failed');
      expect(recorded(ran)).toBe(false);
    }
  });
});
