export { main, COMMANDS, VERSION } from './main.js';
export { parseDatabaseUrl, redactUrl } from './url.js';
