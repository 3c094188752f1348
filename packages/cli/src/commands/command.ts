/** One subcommand: parses its own arguments, writes to `out`, resolves to the exit code. */
export type Command = (argv: string[], out: { write(text: string): Promise<void> }) => Promise<number>;
