export { taskrow } from './factory.js';
export {
  mariadbClient,
  isMariadbPool,
  type MariadbClient,
  type MariadbConnection,
  type MariadbPoolConnection,
  type MariadbPool,
  type MariadbQuery,
} from './client.js';
export { describeMariadbError } from './errors.js';
export { mariadbUrl, type MariadbUrlOptions } from './url.js';
