export {
  DEFAULT_KUBERNETES_RELEASE,
  KIND_VERSION,
  KUBERNETES_RELEASES,
  OCM_RELEASES,
  OCM_VERSION,
  ocmOnKubernetesProblem,
  requireKubernetesRelease,
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
} from './recipes.js';
export { binaryStatus, ensureBinaries, type BinaryStatus, type ProvisionOptions } from './resolve.js';
export { ensureGoModuleSource } from './module-source.js';
export { goBinaryName, type BuildRequest } from './gobuild.js';
export { GoBuildProgress } from './progress.js';
export { stagingModules, wrapperGoMod } from './wrapper.js';
export { kindBinary } from './kind.js';
export type { ArtifactsMode } from './artifacts.js';
export type { Mirrors } from './mirrors.js';
