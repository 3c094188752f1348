import { describeConformance } from '@taskrow/core/conformance';
import { drizzleHarness } from '../../src/harnesses/drizzle.js';
import { startingAt } from '../../src/harnesses/shared.js';
import { libraryKitScope } from '../../src/kit-scope.js';
import { targets } from '../../src/targets.js';

describeConformance(drizzleHarness(startingAt(targets(), 0)), libraryKitScope());
