/** One worker's get: up to some ids it now holds. */
export type GetIds = (worker: number) => Promise<number[]>;
/** One worker's did: reports `ids` done. */
export type DidIds = (worker: number, ids: number[]) => Promise<void>;

/**
 * Runs `workers` get -> did cycles in parallel for `seconds` and returns ids per second. Checks as
 * it goes that no id is held by two workers at once (an id handed out twice throws here).
 */
export async function loopCycles(workers: number, seconds: number, get: GetIds, did: DidIds): Promise<number> {
  const held = new Set<number>();
  let done = 0;
  let stop = false;
  const t0 = process.hrtime.bigint();
  const timer = setTimeout(() => (stop = true), seconds * 1000);
  try {
    await Promise.all(
      Array.from({ length: workers }, async (_, w) => {
        while (!stop) {
          const ids = await get(w);
          for (const id of ids) {
            if (held.has(id)) throw new Error(`id ${id} was handed to two workers at once`);
            held.add(id);
          }
          if (ids.length > 0) await did(w, ids);
          for (const id of ids) held.delete(id);
          done += ids.length;
        }
      }),
    );
  } finally {
    clearTimeout(timer);
  }
  return done / (Number(process.hrtime.bigint() - t0) / 1e9);
}
