import { describePortContract } from '../../src/port/contract.js';
import { PORT_SUBJECTS } from '../../src/port/subjects.js';
import { targets } from '../../src/targets.js';

// The SqlClient contract every adapter's port honours, on every server (mysql2 is the reference).
for (const subject of PORT_SUBJECTS) describePortContract(subject, targets());
