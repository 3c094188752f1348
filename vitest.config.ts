import { defineConfig } from 'vitest/config';

// One run, every project: servers are started once (conformance/src/global-setup.ts) and handed to
// every project as the `targets` list through vitest's provide/inject.
export default defineConfig({
  test: {
    projects: ['packages/*', 'conformance', 'conformance/vitest.kysely029.config.ts', 'packaging'],
    globalSetup: ['./conformance/src/global-setup.ts'],
    reporters: ['default', ['json', { outputFile: '.taskrow/test-results.json' }]],
  },
});
