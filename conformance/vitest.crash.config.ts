import { defineConfig } from 'vitest/config';

// Crash tests: not part of the test suite. `pnpm crash [file filter]` starts every available server
// through the same global setup as the tests, then runs crash/*.crash.ts one file at a time.
export default defineConfig({
  test: {
    name: 'crash',
    include: ['crash/**/*.crash.ts'],
    globalSetup: ['./src/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 30 * 60_000,
    hookTimeout: 10 * 60_000,
    reporters: ['verbose'],
  },
});
