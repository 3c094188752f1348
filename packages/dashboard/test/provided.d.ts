import type { ServerTarget } from '@taskrow/servers';

declare module 'vitest' {
  export interface ProvidedContext {
    targets: ServerTarget[];
  }
}
