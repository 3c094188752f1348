import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'typeorm', include: ['test/**/*.test.ts'] },
});
