import { createRequire } from 'node:module';
import { TaskrowError } from '@taskrow/core';
import { dashboardCommand } from './commands/dashboard.js';
import { demoCommand } from './commands/demo.js';
import { doctorCommand } from './commands/doctor.js';
import { donesCommand } from './commands/dones.js';
import { loopCommand } from './commands/loop.js';
import { queueCommand } from './commands/queue.js';
import { resourcesCommand } from './commands/resources.js';
import { scheduleCommand } from './commands/schedule.js';
import { migrateCommand, schemaCommand } from './commands/schema.js';
import type { Command } from './commands/command.js';
import { EXIT_ERROR, EXIT_OK, EXIT_USAGE, UsageError } from './errors.js';
import { BrokenPipe, createOutput } from './io.js';
import { cliMessage } from './messages.js';
import { commandHelp, shortUsage, USAGE } from './usage.js';

/** Every subcommand by name. */
export const COMMANDS: Record<string, Command> = {
  migrate: migrateCommand,
  schema: schemaCommand,
  doctor: doctorCommand,
  dones: donesCommand,
  loop: loopCommand,
  queue: queueCommand,
  schedule: scheduleCommand,
  resources: resourcesCommand,
  demo: demoCommand,
  dashboard: dashboardCommand,
};

/** Error codes the library gives a value it refuses; every value the CLI passes on came from the command line. */
const BAD_VALUE_CODES: ReadonlySet<string> = new Set(['INVALID_ARGUMENT', 'INVALID_NAME', 'INVALID_KEY']);

/** Whether the library refused a value given on the command line (exit 2, as a usage error). */
function isBadValue(err: unknown): boolean {
  return err instanceof TaskrowError && BAD_VALUE_CODES.has(err.code);
}

/** This package's version, as `taskrow --version` prints it. */
export const VERSION: string = (createRequire(import.meta.url)('../package.json') as { version: string }).version;

/**
 * Runs one command line and resolves to its exit code: 0 ok, 1 error (the message on stderr),
 * 2 usage (the problem, the command's usage lines and a pointer to --help on stderr; or a value the
 * library refused, its message on stderr). Some commands
 * give 1 a meaning of their own (`dones check`: some key pending). A reader that closes stdout
 * early ends the command quietly with 0.
 */
export async function main(argv: string[], out = createOutput()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? process.stderr : process.stdout).write(USAGE);
    return name === undefined ? EXIT_USAGE : EXIT_OK;
  }
  if (name === '--version' || name === '-v' || name === 'version') {
    process.stdout.write(`${VERSION}\n`);
    return EXIT_OK;
  }
  const command = COMMANDS[name];
  try {
    if (!command) throw new UsageError(`unknown command ${JSON.stringify(name)}`);
    if (rest.includes('--help') || rest.includes('-h')) {
      await out.write(commandHelp(name));
      return EXIT_OK;
    }
    return await command(rest, out);
  } catch (err) {
    if (err instanceof BrokenPipe) return EXIT_OK;
    if (err instanceof UsageError) {
      process.stderr.write(`taskrow: ${err.message}\n${shortUsage(command ? name : undefined)}`);
      return EXIT_USAGE;
    }
    process.stderr.write(`taskrow: ${cliMessage(err)}\n`);
    return isBadValue(err) ? EXIT_USAGE : EXIT_ERROR;
  }
}
