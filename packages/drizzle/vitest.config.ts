import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'drizzle', include: ['test/**/*.test.ts'] },
});
