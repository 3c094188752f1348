import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'mariadb', include: ['test/**/*.test.ts'] },
});
