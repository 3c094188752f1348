import { describeConformance } from '@taskrow/core/conformance';
import { typeormHarness } from '../../src/harnesses/typeorm.js';
import { startingAt } from '../../src/harnesses/shared.js';
import { libraryKitScope } from '../../src/kit-scope.js';
import { targets } from '../../src/targets.js';

describeConformance(typeormHarness(startingAt(targets(), 2)), libraryKitScope());
