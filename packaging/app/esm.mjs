// Loads every public package from the installed tarballs as ES modules and checks what it got.
import assert from 'node:assert/strict';
import * as core from '@taskrow/core';
import * as mysql2 from '@taskrow/mysql2';
import * as mariadb from '@taskrow/mariadb';
import * as knex from '@taskrow/knex';
import * as kysely from '@taskrow/kysely';
import * as drizzle from '@taskrow/drizzle';
import * as sequelize from '@taskrow/sequelize';
import * as typeorm from '@taskrow/typeorm';
import * as servers from '@taskrow/servers';
import * as cli from '@taskrow/cli';
import * as dashboard from '@taskrow/dashboard';

for (const [name, fn] of [
  ['mysql2', mysql2.taskrow],
  ['mariadb', mariadb.taskrow],
  ['knex', knex.taskrow],
  ['kysely', kysely.taskrow],
  ['drizzle', drizzle.taskrow],
  ['sequelize', sequelize.taskrow],
  ['typeorm', typeorm.taskrow],
]) {
  assert.equal(typeof fn, 'function', `@taskrow/${name} exports taskrow()`);
  // An adapter's error is core's TaskrowError: one instance of core in the application.
  const err = await fn({}).then(
    () => undefined,
    (e) => e,
  );
  assert.ok(err instanceof core.TaskrowError, `@taskrow/${name} rejects a non-client with core's TaskrowError`);
  assert.equal(err.code, 'INVALID_CLIENT');
}
assert.equal(core.dialectFromVersion('11.8.6-MariaDB', 1 << 24).engine, 'mariadb');
assert.equal(typeof core.describeMysql2Error, 'function');
assert.equal(typeof kysely.taskrowMigrationProvider().getMigrations, 'function');
assert.equal(drizzle.taskrowMigrationFiles().at(-1).path, 'meta/_journal.json');
assert.equal(sequelize.taskrowMigrations()[0].name, 'taskrow_0001_baseline');
assert.match(new (typeorm.taskrowMigrations()[0])().name, /^taskrow_0001_baseline\d{13}$/);
assert.equal(typeof servers.startServer, 'function');
assert.equal(typeof cli.main, 'function');
assert.equal(typeof dashboard.dashboardHandler, 'function');
console.log('esm ok');
