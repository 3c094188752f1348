import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'sequelize', include: ['test/**/*.test.ts'] },
});
