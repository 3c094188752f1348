import { describeConformance } from '@taskrow/core/conformance';
import { clusterConformanceTarget, clusterHarness, clusters } from '../src/cluster-harness.js';
import { describeClusterStaysWhole } from '../src/cluster-health.js';
import { mariadbHarness } from '../src/harnesses/mariadb.js';

for (const c of clusters()) {
  describeConformance(clusterHarness(mariadbHarness([clusterConformanceTarget(c)]), c.kind));
  describeClusterStaysWhole(c);
}
