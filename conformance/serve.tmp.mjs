import { startServer } from '@taskrow/servers';
const s = await startServer({ engine: process.argv[2], sources: ['local'] });
console.log(s.url, s.version);
process.on('SIGTERM', async () => { await s.stop?.(); process.exit(0); });
setInterval(() => {}, 1e6);
