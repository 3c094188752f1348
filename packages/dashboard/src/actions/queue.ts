import { seg } from '../context.js';
import { SEG, type Action } from './types.js';

/** Pause and resume of a queue (reversible, so no confirmation). */
export const QUEUE_ACTIONS: readonly Action[] = [
  {
    name: 'pause',
    pattern: new RegExp(`^/queues/${SEG}/pause$`),
    async run({ ctx }) {
      const queue = ctx.taskrow.queue(ctx.params[0]!);
      await queue.pause();
      const what = `Queue ${queue.name} is paused: workers take none of its jobs until it is resumed.`;
      return { title: 'Pause queue', what, back: `/queues/${seg(queue.name)}`, details: { queue: queue.name } };
    },
  },
  {
    name: 'resume',
    pattern: new RegExp(`^/queues/${SEG}/resume$`),
    async run({ ctx }) {
      const queue = ctx.taskrow.queue(ctx.params[0]!);
      await queue.resume();
      return {
        title: 'Resume queue',
        what: `Queue ${queue.name} is resumed: workers take its jobs again.`,
        back: `/queues/${seg(queue.name)}`,
        details: { queue: queue.name },
      };
    },
  },
];
