import { TaskrowError } from '@taskrow/core';
import { dashboardCommand } from './commands/dashboard.js';
import { demoCommand } from './commands/demo.js';
import { donesCommand } from './commands/dones.js';
import { loopCommand } from './commands/loop.js';
import { queueCommand } from './commands/queue.js';
import { resourcesCommand } from './commands/resources.js';
import { migrateCommand, schemaCommand } from './commands/schema.js';
import type { Command } from './commands/command.js';
import { EXIT_ERROR, EXIT_OK, EXIT_USAGE, UsageError } from './errors.js';
import { BrokenPipe, createOutput } from './io.js';
import { USAGE } from './usage.js';

/** Every subcommand by name. */
export const COMMANDS: Record<string, Command> = {
  migrate: migrateCommand,
  schema: schemaCommand,
  dones: donesCommand,
  loop: loopCommand,
  queue: queueCommand,
  resources: resourcesCommand,
  demo: demoCommand,
  dashboard: dashboardCommand,
};

/**
 * Runs one command line and resolves to its exit code: 0 ok, 1 error (the message on stderr),
 * 2 usage (the problem and the usage on stderr). A reader that closes stdout early ends the
 * command quietly with 0.
 */
export async function main(argv: string[], out = createOutput()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? process.stderr : process.stdout).write(USAGE);
    return name === undefined ? EXIT_USAGE : EXIT_OK;
  }
  const command = COMMANDS[name];
  try {
    if (!command) throw new UsageError(`unknown command ${JSON.stringify(name)}`);
    if (rest.includes('--help') || rest.includes('-h')) {
      await out.write(USAGE);
      return EXIT_OK;
    }
    return await command(rest, out);
  } catch (err) {
    if (err instanceof BrokenPipe) return EXIT_OK;
    if (err instanceof UsageError) {
      process.stderr.write(`taskrow: ${err.message}\n\n${USAGE}`);
      return EXIT_USAGE;
    }
    const code = err instanceof TaskrowError ? ` [${err.code}]` : '';
    process.stderr.write(`taskrow: ${(err as Error).message ?? String(err)}${code}\n`);
    return EXIT_ERROR;
  }
}
