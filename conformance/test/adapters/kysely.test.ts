import { describeConformance } from '@taskrow/core/conformance';
import { kyselyHarness } from '../../src/harnesses/kysely.js';
import { startingAt } from '../../src/harnesses/shared.js';
import { targets } from '../../src/targets.js';

describeConformance(kyselyHarness(startingAt(targets(), 0)));
