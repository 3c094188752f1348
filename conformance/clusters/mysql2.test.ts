import { describeConformance } from '@taskrow/core/conformance';
import { clusterConformanceTarget, clusterHarness, clusters } from '../src/cluster-harness.js';
import { describeClusterStaysWhole } from '../src/cluster-health.js';
import { mysql2Harness } from '../src/harnesses/mysql2.js';

for (const c of clusters()) {
  describeConformance(clusterHarness(mysql2Harness([clusterConformanceTarget(c)]), c.kind));
  describeClusterStaysWhole(c);
}
