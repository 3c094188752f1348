export { taskrow } from './factory.js';
export { knexClient, knexClosed } from './client.js';
export { describeKnexError } from './errors.js';
export { taskrowMigrations, type TaskrowMigrationsOptions } from './migrations.js';
