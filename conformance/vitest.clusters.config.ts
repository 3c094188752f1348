import { defineConfig } from 'vitest/config';

// The conformance kit on clusters: `pnpm test:clusters`. The cluster global setup starts a 3-node
// Galera and a 3-node Group Replication cluster (TASKROW_CLUSTERS picks others), and each adapter
// file runs the whole kit with its sessions spread over the nodes (src/cluster-harness.ts).
export default defineConfig({
  test: {
    name: 'clusters',
    include: ['clusters/**/*.test.ts'],
    globalSetup: ['./src/cluster-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    // One kit at a time: two at once on six nodes of a 2-core machine stall commits for seconds
    // (Group Replication flow control), past the leases of the extension cases.
    maxWorkers: 1,
    // TASKROW_CLUSTER_RESULTS names the JSON report (`.ci/run` keeps one per cluster run).
    reporters: ['default', ['json', { outputFile: process.env['TASKROW_CLUSTER_RESULTS'] ?? '../.taskrow/cluster-results.json' }]],
  },
});
