import { describeConformance } from '@taskrow/core/conformance';
import { knexHarness } from '../../src/harnesses/knex.js';
import { startingAt } from '../../src/harnesses/shared.js';
import { targets } from '../../src/targets.js';

describeConformance(knexHarness(startingAt(targets(), 2)));
