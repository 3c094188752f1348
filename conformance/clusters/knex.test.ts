import { describeConformance } from '@taskrow/core/conformance';
import { clusterConformanceTarget, clusterHarness, clusters } from '../src/cluster-harness.js';
import { knexHarness } from '../src/harnesses/knex.js';

// Not in `.ci/run` (which runs mysql2 and mariadb on the clusters): `pnpm test:clusters` runs it.
for (const c of clusters()) describeConformance(clusterHarness(knexHarness([clusterConformanceTarget(c)]), c.kind));
