import { defineProject } from 'vitest/config';

// The Kysely adapter against Kysely 0.29 (installed as `kysely-0.29`): every `kysely` import, the
// adapter's own included (vite inlines workspace packages), resolves to 0.29 in this project.
export default defineProject({
  resolve: { alias: [{ find: /^kysely(\/.*)?$/, replacement: 'kysely-0.29$1' }] },
  test: {
    name: 'kysely-0.29',
    include: ['kysely-0.29/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
