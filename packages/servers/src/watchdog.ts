import { spawn } from 'node:child_process';

/**
 * Starts a detached shell that waits for this process to exit, then stops `pid` (TERM, then KILL
 * after 15 s) and removes `dataDir`. It makes sure a server never outlives the run that started it,
 * even when that run is killed with SIGKILL. Returns a function that cancels the watchdog.
 */
export function startWatchdog(pid: number, dataDir: string): () => void {
  const script =
    'while kill -0 "$0" 2>/dev/null; do sleep 1; done; ' +
    'kill -TERM "$1" 2>/dev/null; i=0; while kill -0 "$1" 2>/dev/null && [ $i -lt 15 ]; do sleep 1; i=$((i+1)); done; ' +
    'kill -KILL "$1" 2>/dev/null; rm -rf -- "$2"';
  const dog = spawn('sh', ['-c', script, String(process.pid), String(pid), dataDir], {
    detached: true,
    stdio: 'ignore',
  });
  dog.unref();
  return () => {
    if (dog.pid !== undefined) {
      try {
        process.kill(dog.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
}
