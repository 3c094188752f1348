import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'knex', include: ['test/**/*.test.ts'] },
});
