import { table } from '../tables.js';

/** The Dones tables under one prefix. */
export interface DonesTables {
  /** name -> current generation. */
  readonly ns: string;
  /** Generation allocator; retired generations wait here for the purge. */
  readonly gen: string;
  /** (generation, key in index form: verbatim up to 2,999 bytes, else prefix + SHA-256) -> full key when long, time marked. */
  readonly dones: string;
}

export function donesTables(prefix: string): DonesTables {
  return { ns: table(prefix, 'dones_ns'), gen: table(prefix, 'dones_gen'), dones: table(prefix, 'dones') };
}
