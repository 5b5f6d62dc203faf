export { ociConfig, realHostView, sharedDirMounts, writeBundle, writePodEtcFiles, capabilitySet, DEFAULT_CAPABILITIES, SHARED_HOST_DIRS, type BindMount, type BundleInput, type HostAlias, type HostView, type OciConfig, type OciMount } from './bundle.js';
export {
  cleanupContainers,
  listContainers,
  runcAt,
  runcCommand,
  runcExec,
  RuncContainer,
  type ContainerExit,
  type ExecOptions,
  type ExecProcess,
  type LogSink,
  type Runc,
  type RuncState,
} from './runc.js';
export { noNewPrivileges, processCapabilities, processUser, volumeOwner, type ProcessUser } from './security.js';
