import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'kysely', include: ['test/**/*.test.ts'] },
});
