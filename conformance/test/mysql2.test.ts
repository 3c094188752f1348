import { describeDonesConformance } from '@taskrow/core/conformance';
import { mysql2Harness } from '../src/harnesses/mysql2.js';
import { targets } from '../src/targets.js';

describeDonesConformance(mysql2Harness(targets()));
