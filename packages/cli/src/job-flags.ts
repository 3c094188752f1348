import { ENQUEUE_LIMITS, type EnqueueOptions } from '@taskrow/core';
import { durationFlag, intFlag, type Parsed } from './args.js';

/** The flags that set a job's options, shared by `queue enqueue` and `schedule add`. */
export const JOB_FLAGS = {
  delay: { type: 'string' },
  priority: { type: 'string' },
  'max-attempts': { type: 'string' },
  'dedup-key': { type: 'string' },
  group: { type: 'string' },
  'concurrency-key': { type: 'string' },
} as const;

/**
 * The job options the flags give, each number checked against the same range `enqueue()` accepts
 * (a UsageError naming the flag otherwise), before anything connects.
 */
export function jobFlags(values: Parsed['values']): EnqueueOptions {
  const { delayMs, priority, maxAttempts } = ENQUEUE_LIMITS;
  const text = (name: string): string | undefined => (values[name] === undefined ? undefined : String(values[name]));
  const group = text('group');
  const dedupKey = text('dedup-key');
  const concurrencyKey = text('concurrency-key');
  return {
    ...(values['delay'] === undefined ? {} : { delay: durationFlag(values, 'delay', 0, delayMs.min, delayMs.max) }),
    ...(values['priority'] === undefined ? {} : { priority: intFlag(values, 'priority', 0, priority.min, priority.max) }),
    ...(values['max-attempts'] === undefined ? {} : { maxAttempts: intFlag(values, 'max-attempts', 1, maxAttempts.min, maxAttempts.max) }),
    ...(group === undefined ? {} : { group }),
    ...(dedupKey === undefined ? {} : { dedupKey }),
    ...(concurrencyKey === undefined ? {} : { concurrencyKey }),
  };
}
