import { describeConformance } from '@taskrow/core/conformance';
import { mysql2Harness } from '../../src/harnesses/mysql2.js';
import { targets } from '../../src/targets.js';

describeConformance(mysql2Harness(targets()));
