/** The text `taskrow --help` prints. */
export const USAGE = `usage: taskrow COMMAND [ARGS] [--url URL | --embedded] [--prefix P] [--json]

commands:
  migrate                                  create or upgrade taskrow's tables and stored procedures
  schema [--engine mysql|mariadb]          print the DDL (no connection needed), the procedures too with --engine
  doctor [--json]                          check the server and schema (read-only): OK / WARN / FAIL with the fix
                                           each; exit 1 when any check failed
  dones mark|unmark NS [KEY...]            mark / unmark keys (stdin, one per line, when no KEY)
  dones check NS [KEY...]                  print done/pending for each key; exit 1 when any is pending
  dones pending NS                         read candidate keys on stdin, write the not-done ones
  dones count|list|clear NS                count, list (--limit, --after) or clear a namespace
  loop create LOOP [--id-type int|bigint|string:N]        create a task loop (doloop)
  loop add|remove|did|unlock|bump LOOP [ID...]    write ids (stdin when no ID); --dry-run rolls back
  loop get LOOP --limit N [--lock-for D] [--min-loop-time D]      lease the most overdue ids
  loop check LOOP [ID...] | loop stats LOOP       since-updated / locked-for milliseconds; loop stats
  queue enqueue QUEUE [JSON...]            enqueue payloads (stdin, one JSON per line, when none);
                                           --delay D --priority N --max-attempts N --group G --dedup-key K
                                           --concurrency-key K
  queue list QUEUE [--state S[,S...]] [--group G] [--limit N] [--after CURSOR]
                                           a page of jobs: id, state, attempt/max, priority, group, due, payload
  queue show QUEUE ID                      one job, every field, its last error included
  queue remove QUEUE ID...                 delete jobs that have not started (ready, delayed, blocked); prints how many
  queue promote QUEUE ID...                make delayed jobs due now; prints how many
  queue stats QUEUE | queue retry-dead QUEUE [--limit N]
  queue purge QUEUE [--keep-finished-count N] [--keep-dead-for D] [--keep-dead-count N]
                                           delete finished jobs past their retention and dead jobs past these limits
  queue purge-keys QUEUE                   delete the rows of concurrency keys no job holds or waits for, with no limit of their own
  queue pause QUEUE | queue resume QUEUE   stop / restart claims of the queue in every process
  schedule add NAME --queue Q (--cron EXPR [--tz TZ] | --every D) [JSON]   create or replace a recurring
                                           schedule; --missed skip|once|each:N and the enqueue flags above
  schedule list | schedule remove NAME     every schedule: name, queue, timing, missed, next, last, payload
  resources show                           running jobs and the keys they hold
  resources edges [--since D] | upstream|downstream KEY          the flow graph (jobs.py history)
  resources produce KEY... [--ttl D] | force-release KEY...       create outputs / free keys by hand
  demo                                     the main demo, on an embedded server unless --url is given
  dashboard [--port N] [--host H] [--actions-token T] [--allowed-host NAME,...]   web dashboard and /metrics
                                           (default 127.0.0.1:8089; actions only with a token, or $TASKROW_DASHBOARD_TOKEN;
                                           answers localhost, IP addresses and the --allowed-host names)

connection:
  --url mysql://user:password@host:port/database   (or mariadb://; default: $TASKROW_URL)
  --embedded [--engine mariadb|mysql]               start a local server through @taskrow/servers

durations (D): a number with a unit, such as 500ms, 5s, 2m, 1h or 1d; a bare number is milliseconds.
stdin: one key per line; a trailing CR is dropped (CRLF files work) and blank lines are skipped.
output: stdout is machine-readable (--json for JSON); progress goes to stderr on a terminal.
exit codes:
  0  ok
  1  a failure while running: the server refused, or a job or schedule was not found (dones check: some key pending;
     doctor: some check failed)
  2  the command line is wrong: an unknown command, action or flag, or a value refused, whichever check finds it
taskrow --version prints the version; taskrow COMMAND --help prints that command's lines.
`;

/** The usage lines of `command` (its continuation lines included), or none when it has none. */
function ownLines(command: string): string[] {
  const own: string[] = [];
  let inside = false;
  for (const line of USAGE.split('\n')) {
    if (line.startsWith(`  ${command} `)) inside = true;
    else if (!/^ {20,}\S/.test(line)) inside = false; // a continuation line stays with its command
    if (inside) own.push(line);
  }
  return own;
}

/**
 * The short text a usage error prints under its message: the usage lines of `command` (or of the
 * whole CLI when it names none or an unknown one) and a pointer to `taskrow --help`.
 */
export function shortUsage(command: string | undefined): string {
  const own = command === undefined ? [] : ownLines(command);
  const head = own.length > 0 ? `usage:\n${own.join('\n')}` : USAGE.split('\n')[0];
  return `${head}\nrun taskrow --help for every command and option\n`;
}

/** What `taskrow COMMAND --help` prints: the command's lines, then the connection, output and exit code notes. */
export function commandHelp(command: string): string {
  const rest = USAGE.slice(USAGE.indexOf('\nconnection:\n') + 1);
  return `usage:\n${ownLines(command).join('\n')}\n\n${rest}`;
}
