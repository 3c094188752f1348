import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

/** `task-000001`, `task-000002`, ... generated lazily, so a long list costs no memory. */
export function* generatedTasks(count: number): Generator<string> {
  const width = Math.max(6, String(count).length);
  for (let i = 1; i <= count; i++) yield `task-${String(i).padStart(width, '0')}`;
}

/**
 * The lines of a task file, streamed: CRLF and LF both end a line, blank lines are skipped, and
 * every other character is kept (Dones keys are exact strings: `"a"` and `"a "` are two tasks).
 */
export async function* taskLines(file: string): AsyncGenerator<string> {
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of lines) if (line !== '') yield line;
}

/** Every task of a file, in order. */
export async function readTasks(file: string): Promise<string[]> {
  const tasks: string[] = [];
  for await (const task of taskLines(file)) tasks.push(task);
  return tasks;
}

/** `value` as one shell word (single-quoted unless it is plainly safe). */
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_.:@%+=,/-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
