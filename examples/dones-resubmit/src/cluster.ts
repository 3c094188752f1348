import type { Dones } from '@taskrow/core';

/** What one simulated round on the cluster did. */
export interface Round {
  readonly jobs: number;
  readonly died: number;
}

/**
 * One cluster job: works through its slice of tasks and marks the finished ones every `checkpoint`
 * tasks. A job that dies stops at a random point; the tasks it finished since its last checkpoint
 * are lost with it (they were done but never marked), as on a real cluster.
 */
async function runJob(dones: Dones, slice: readonly string[], dies: boolean, checkpoint: number): Promise<void> {
  const stopAt = dies ? Math.floor(Math.random() * slice.length) : slice.length;
  let finished: string[] = [];
  for (let i = 0; i < stopAt; i++) {
    finished.push(slice[i]!); // the task's real work would run here
    if (finished.length === checkpoint) {
      await dones.mark(finished);
      finished = [];
    }
  }
  if (!dies && finished.length > 0) await dones.mark(finished);
}

/**
 * Splits `tasks` over `jobs` jobs running at once (about a `die` share of them die part-way) and
 * waits for all of them.
 */
export async function runRound(dones: Dones, tasks: readonly string[], o: { jobs: number; die: number; checkpoint: number }): Promise<Round> {
  const jobs = Math.min(o.jobs, tasks.length);
  const dying = new Set<number>();
  const dead = Math.round(jobs * o.die);
  while (dying.size < dead) dying.add(Math.floor(Math.random() * jobs));
  const running: Promise<void>[] = [];
  for (let j = 0; j < jobs; j++) {
    const slice = tasks.slice(Math.floor((j * tasks.length) / jobs), Math.floor(((j + 1) * tasks.length) / jobs));
    running.push(runJob(dones, slice, dying.has(j), o.checkpoint));
  }
  await Promise.all(running);
  return { jobs, died: dead };
}
