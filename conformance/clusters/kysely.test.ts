import { describeConformance } from '@taskrow/core/conformance';
import { clusterConformanceTarget, clusterHarness, clusters } from '../src/cluster-harness.js';
import { kyselyHarness } from '../src/harnesses/kysely.js';

// Not in `.ci/run` (which runs mysql2 and mariadb on the clusters): `pnpm test:clusters` runs it.
for (const c of clusters()) describeConformance(clusterHarness(kyselyHarness([clusterConformanceTarget(c)]), c.kind));
