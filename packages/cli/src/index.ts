export { main, COMMANDS } from './main.js';
export { parseDatabaseUrl, redactUrl } from './url.js';
