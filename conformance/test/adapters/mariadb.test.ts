import { describeConformance } from '@taskrow/core/conformance';
import { mariadbHarness } from '../../src/harnesses/mariadb.js';
import { startingAt } from '../../src/harnesses/shared.js';
import { targets } from '../../src/targets.js';

describeConformance(mariadbHarness(startingAt(targets(), 1)));
