import { createInterface } from 'node:readline';

/**
 * Lines of standard input, streamed: a trailing `\r` is removed (CRLF files work) and blank lines
 * are skipped. Every other character is kept, spaces and tabs included. On a terminal it first says
 * on stderr that it is waiting for `what`, so a command run without arguments does not sit silent.
 */
export async function* stdinLines(input: NodeJS.ReadableStream = process.stdin, what = 'lines'): AsyncGenerator<string> {
  if ((input as { isTTY?: boolean }).isTTY) process.stderr.write(`taskrow: reading ${what} from standard input, one per line; end with Ctrl-D\n`);
  const rl = createInterface({ input, crlfDelay: Infinity });
  for await (const raw of rl) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.length > 0) yield line;
  }
}

/** Groups a stream into arrays of at most `size`. */
export async function* batches<T>(items: AsyncIterable<T>, size: number): AsyncGenerator<T[]> {
  let batch: T[] = [];
  for await (const item of items) {
    batch.push(item);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/** Thrown when stdout's reader went away (`| head`); the command then ends quietly. */
export class BrokenPipe extends Error {}

/** Writes to stdout with backpressure; rejects with BrokenPipe once the reader is gone. */
export function createOutput(stream: NodeJS.WritableStream = process.stdout): { write(text: string): Promise<void> } {
  let broken = false;
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') broken = true;
  });
  return {
    write(text) {
      if (broken) return Promise.reject(new BrokenPipe());
      if (stream.write(text)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const onDrain = (): void => {
          stream.off('error', onError);
          resolve();
        };
        const onError = (): void => {
          stream.off('drain', onDrain);
          reject(new BrokenPipe());
        };
        stream.once('drain', onDrain);
        stream.once('error', onError);
      });
    },
  };
}

/** A progress line on stderr, only when stderr is a terminal; never on stdout. */
export function progress(label: string): { tick(n: number, extra?: string): void; done(): void } {
  const tty = Boolean(process.stderr.isTTY);
  let last = 0;
  return {
    tick(n, extra = '') {
      if (!tty) return;
      const now = Date.now();
      if (now - last < 100) return;
      last = now;
      process.stderr.write(`\r${label}: ${n.toLocaleString('en-US')}${extra ? ` ${extra}` : ''}\x1b[K`);
    },
    done() {
      if (tty) process.stderr.write('\r\x1b[K');
    },
  };
}
