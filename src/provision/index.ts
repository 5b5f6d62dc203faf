export {
  DEFAULT_KUBERNETES_RELEASE,
  KIND_VERSION,
  KUBERNETES_RELEASES,
  KUBERNETES_VERSION,
  MIN_GO,
  OCM_VERSION,
  kubernetesRelease,
  requireKubernetesRelease,
  type KubernetesRelease,
} from './versions.js';
export {
  ALL_BINARIES,
  KIND_NODE_BINARIES,
  KUBERNETES_BINARIES,
  OCM_BINARIES,
  kubernetesLdflags,
  ocmLdflags,
  printsVersion,
  recipeOf,
  recipesFor,
  type BinaryName,
  type Recipe,
} from './recipes.js';
export { binaryStatus, ensureBinaries, reportsVersion, type BinarySource, type BinaryStatus, type ProvisionOptions, type StatusOptions } from './resolve.js';
export { ensureGoModuleSource } from './module-source.js';
export { goBinaryName, type Builder, type BuildRequest } from './gobuild.js';
export { GoBuildProgress } from './progress.js';
export { stagingModules, wrapperGoMod } from './wrapper.js';
export { kindBinary } from './kind.js';
