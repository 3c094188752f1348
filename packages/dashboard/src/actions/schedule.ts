import { validateName } from '@taskrow/core';
import { SEG, type Action } from './types.js';

/** Removal of a schedule, after a confirmation (jobs it already enqueued stay). */
export const SCHEDULE_ACTIONS: readonly Action[] = [
  {
    name: 'remove-schedule',
    pattern: new RegExp(`^/schedules/${SEG}/remove$`),
    confirm: ({ ctx }) => `Remove schedule ${validateName('schedule', ctx.params[0]!)}? Jobs it already enqueued stay.`,
    async run({ ctx }) {
      const name = ctx.params[0]!;
      const existed = await ctx.taskrow.schedules().remove(name);
      const what = existed ? `Removed schedule ${name}.` : `No schedule ${name}: it was removed already.`;
      return { title: 'Remove schedule', what, back: '/schedules', details: { schedule: name, existed } };
    },
  },
];
