import { defineConfig } from 'vitest/config';

// Benchmarks: not part of the test suite. `pnpm bench [file filter]` starts every available server
// through the same global setup as the tests, then runs bench/*.bench.ts one file at a time.
export default defineConfig({
  test: {
    name: 'bench',
    include: ['bench/**/*.bench.ts'],
    globalSetup: ['./src/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 60 * 60_000,
    hookTimeout: 10 * 60_000,
    reporters: ['verbose'],
    // taskrow's packages run as Node loads them, as BullMQ (under node_modules) does: the test
    // runner would otherwise inline their built files (under packages/*/dist) and route every
    // imported binding through its module evaluator.
    server: { deps: { external: [/\/packages\/[^/]+\/dist\//] } },
  },
});
