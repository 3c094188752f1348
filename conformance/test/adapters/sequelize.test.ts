import { describeConformance } from '@taskrow/core/conformance';
import { sequelizeHarness } from '../../src/harnesses/sequelize.js';
import { startingAt } from '../../src/harnesses/shared.js';
import { libraryKitScope } from '../../src/kit-scope.js';
import { targets } from '../../src/targets.js';

describeConformance(sequelizeHarness(startingAt(targets(), 1)), libraryKitScope());
