import { defineConfig } from 'vitest/config';

// Fault suite: `pnpm chaos [file filter]` (issue 12). Starts every available server through the same
// global setup as the tests (scenario a starts its own durable servers), then runs
// chaos/*.chaos.ts one file at a time. TASKROW_CHAOS_RESULTS names a JSON results file (.ci/run).
const results = process.env['TASKROW_CHAOS_RESULTS'];
export default defineConfig({
  test: {
    name: 'chaos',
    include: ['chaos/**/*.chaos.ts'],
    globalSetup: ['./src/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 300_000,
    reporters: results ? ['verbose', ['json', { outputFile: results }]] : ['verbose'],
  },
});
