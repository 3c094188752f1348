/** Something holding locks that can be released as failed when the process shuts down. */
export interface Holding {
  releaseForShutdown(): Promise<void>;
}

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;
type Sig = (typeof SIGNALS)[number];

// Process-wide on purpose: signals and `beforeExit` belong to the process, not to a taskrow
// instance, so every instance's held Resources jobs are released by the one listener.
const held = new Set<Holding>();
let installed = false;
let releasing: Promise<void> | undefined;

/**
 * Releases every job this process holds as failed (outputs not marked), as taskrow does on
 * SIGTERM, SIGINT and `beforeExit`. For applications with their own shutdown sequence: await it
 * before `process.exit()`. Concurrent calls share one pass; never rejects.
 */
export function releaseAllHeld(): Promise<void> {
  releasing ??= releasePass();
  return releasing;
}

async function releasePass(): Promise<void> {
  try {
    await null; // let `releasing` be assigned before the finally block below can clear it
    while (held.size > 0) await Promise.allSettled([...held].map((h) => h.releaseForShutdown()));
  } finally {
    releasing = undefined;
    if (held.size === 0) uninstall();
  }
}

/**
 * On SIGTERM / SIGINT: release as failed, then, if no other listener handles the signal (so Node
 * would have ended the process), re-raise it with taskrow's listener removed so the process ends
 * as it would have without taskrow. With another listener present, ending is left to it.
 */
function onSignal(signal: Sig): Promise<void> {
  return releaseAllHeld().finally(() => {
    uninstall();
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  });
}

const listeners: Record<Sig, () => Promise<void>> = { SIGTERM: () => onSignal('SIGTERM'), SIGINT: () => onSignal('SIGINT') };
const onBeforeExit = (): Promise<void> => releaseAllHeld();

function install(): void {
  if (installed) return;
  installed = true;
  for (const s of SIGNALS) process.on(s, listeners[s]);
  process.on('beforeExit', onBeforeExit);
}

function uninstall(): void {
  if (!installed) return;
  installed = false;
  for (const s of SIGNALS) process.removeListener(s, listeners[s]);
  process.removeListener('beforeExit', onBeforeExit);
}

/**
 * Registers a job that holds locks. The process listeners exist only while at least one job is
 * registered, so an application that holds nothing sees no listener from taskrow.
 */
export function noteHeld(h: Holding): void {
  held.add(h);
  install();
}

/** Unregisters a job once it holds nothing; removes the listeners with the last one. */
export function noteReleased(h: Holding): void {
  held.delete(h);
  if (held.size === 0 && !releasing) uninstall();
}

/**
 * The listener taskrow installs for `event` while locks are held (undefined otherwise), for tests;
 * it returns a promise that settles once the held jobs are released and the signal re-raised or not.
 */
export function shutdownListener(event: Sig | 'beforeExit'): (() => Promise<void>) | undefined {
  if (!installed) return undefined;
  return event === 'beforeExit' ? onBeforeExit : listeners[event];
}
