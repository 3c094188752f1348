import { describeConformance } from '@taskrow/core/conformance';
import { knexHarness } from '../../src/harnesses/knex.js';
import { startingAt } from '../../src/harnesses/shared.js';
import { libraryKitScope } from '../../src/kit-scope.js';
import { targets } from '../../src/targets.js';

describeConformance(knexHarness(startingAt(targets(), 2)), libraryKitScope());
