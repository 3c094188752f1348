export { taskrow, type Mysql2Input } from './factory.js';
export { mysql2Client, type Mysql2Client, type Mysql2Connection, type Mysql2Pool } from './client.js';
