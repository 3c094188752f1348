import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'mysql2', include: ['test/**/*.test.ts'] },
});
