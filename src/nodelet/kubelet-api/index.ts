export { startKubeletServer } from './server.js';
export { KubeletNotFound, type ExecProcess, type KubeletBackend, type KubeletServer, type LogStreamOptions } from './types.js';
