// Loads every public package from the installed tarballs with require() and checks that require and
// import share one instance of each module (no dual-package hazard).
'use strict';
const assert = require('node:assert/strict');
const core = require('@taskrow/core');
const names = ['mysql2', 'mariadb', 'knex', 'kysely', 'drizzle', 'sequelize', 'typeorm'];

(async () => {
  for (const name of names) {
    const adapter = require(`@taskrow/${name}`);
    assert.equal(typeof adapter.taskrow, 'function', `require('@taskrow/${name}').taskrow`);
    const err = await adapter.taskrow({}).then(() => undefined, (e) => e);
    assert.ok(err instanceof core.TaskrowError, `@taskrow/${name} rejects with the required core's TaskrowError`);
    assert.equal(err.code, 'INVALID_CLIENT');
    assert.equal(adapter, await import(`@taskrow/${name}`), `require and import of @taskrow/${name} give one module`);
  }
  assert.equal(core.TaskrowError, (await import('@taskrow/core')).TaskrowError, 'one TaskrowError for require and import');
  assert.equal(typeof require('@taskrow/servers').startServer, 'function');
  assert.equal(typeof require('@taskrow/cli').main, 'function');
  assert.equal(require('@taskrow/dashboard'), await import('@taskrow/dashboard'), 'require and import of @taskrow/dashboard give one module');
  assert.equal(require('@taskrow/core/package.json').name, '@taskrow/core');
  console.log('cjs ok');
})().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
