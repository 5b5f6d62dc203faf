export {
  ETCD_VERSION,
  KUBERNETES_BINARIES,
  KUBERNETES_VERSION,
  OCM_BINARIES,
  OCM_VERSION,
  recipesFor,
  type BinaryName,
  type Recipe,
} from './recipes.js';
export { binaryStatus, ensureBinaries, ensureGoModuleSource, reportsVersion, type BinaryStatus, type ProvisionOptions } from './resolve.js';
export { stagingModules, wrapperGoMod } from './wrapper.js';
export { goBinaryName } from './gobuild.js';
