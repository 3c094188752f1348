import type { ServerTarget } from '../src/types.js';

declare module 'vitest' {
  export interface ProvidedContext {
    targets: ServerTarget[];
  }
}
