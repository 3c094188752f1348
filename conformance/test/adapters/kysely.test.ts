import { describeConformance } from '@taskrow/core/conformance';
import { kyselyHarness } from '../../src/harnesses/kysely.js';
import { startingAt } from '../../src/harnesses/shared.js';
import { libraryKitScope } from '../../src/kit-scope.js';
import { targets } from '../../src/targets.js';

describeConformance(kyselyHarness(startingAt(targets(), 0)), libraryKitScope());
