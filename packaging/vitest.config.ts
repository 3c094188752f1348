import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'packaging', include: ['test/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 900_000 },
});
