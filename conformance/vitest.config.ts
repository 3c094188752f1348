import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'conformance',
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Two adapter files at a time, each starting on a different server (see startingAt): the
    // servers share the load. Its own group, after the other projects, as vitest requires for a
    // project with its own worker count.
    maxWorkers: 2,
    sequence: { groupOrder: 1 },
  },
});
