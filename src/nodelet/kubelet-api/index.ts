export { startKubeletServer } from './server.js';
export {
  DEFAULT_ALLOWED_IDENTITIES,
  KubeletNotFound,
  type AllowedIdentities,
  type ExecProcess,
  type KubeletBackend,
  type KubeletServer,
  type KubeletServerOptions,
  type LogStreamOptions,
} from './types.js';
