export type { Durability, Engine, ServerHandle, ServerSource, ServerTarget, StartServerOptions } from './types.js';
export { startServer } from './start-server.js';
export { freePortBelowEphemeral, ephemeralRange } from './ports.js';
export { startTargets, REQUIRED_LOCAL, type TargetSet } from './targets.js';
export { installedServers, installerPath, serversCacheDir, type InstalledServer } from './manifest.js';
export { envVarName, envUrls } from './env.js';
export { CONTAINER_IMAGES, containerRuntimeAvailable } from './containers.js';
export { redact } from './probe.js';
export { shortVersion, versionMatches, compareVersions } from './version.js';
