import { setTimeout as sleep } from 'node:timers/promises';
import { ResourceUnavailableError, type Resources } from '@taskrow/core';

/** The three steps of one day: each reads the previous step's output. */
export function steps(day: string) {
  return [
    { job: `extract.${day}`, inputs: [], outputs: [`raw.events.${day}`] },
    { job: `transform.${day}`, inputs: [`raw.events.${day}`], outputs: [`clean.events.${day}`] },
    { job: `report.${day}`, inputs: [`clean.events.${day}`], outputs: [`reports.daily.${day}`] },
  ];
}

export type Step = ReturnType<typeof steps>[number];

/** How one job ended. */
export type Outcome = 'ran' | 'failed' | 'refused';

/** "input_missing on clean.events.2024-01-03, ..." */
export function reasons(err: ResourceUnavailableError): string {
  return err.reasons.map((r) => `${r.reason} on ${r.key}`).join(', ');
}

/**
 * Runs one step with `run()`: it takes its locks (waiting up to `wait` seconds for its inputs to
 * exist), does its work, and on success marks its outputs as existing for the next step. A step
 * whose work throws is released as failed: its outputs are not marked. A step whose inputs never
 * appear is refused with a `ResourceUnavailableError`.
 */
export async function runStep(res: Resources, step: Step, o: { wait: number; workMs: number; fails: boolean }, log: (line: string) => void): Promise<Outcome> {
  const launched = performance.now();
  try {
    await res.run(step.job, { inputs: step.inputs, outputs: step.outputs, wait: o.wait * 1000, lease: 30_000 }, async (_job, signal) => {
      const waited = performance.now() - launched;
      const on = step.inputs.length === 0 ? 'no inputs' : `after ${waited.toFixed(0)} ms waiting for ${step.inputs.join(', ')}`;
      log(`${step.job} started (${on})`);
      await sleep(o.workMs, undefined, { signal }); // the real work would read the inputs and write the outputs here
      if (o.fails) throw new Error('corrupt input');
    });
    log(`${step.job} done: ${step.outputs.join(', ')} exists now`);
    return 'ran';
  } catch (err) {
    if (err instanceof ResourceUnavailableError) {
      log(`${step.job} refused after waiting ${o.wait} s: ${reasons(err)}`);
      return 'refused';
    }
    if (err instanceof Error && err.message === 'corrupt input') {
      log(`${step.job} failed (${err.message}): released as failed, ${step.outputs.join(', ')} not produced`);
      return 'failed';
    }
    throw err;
  }
}
