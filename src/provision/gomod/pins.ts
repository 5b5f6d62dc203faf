/**
 * go.sum's `h1:` hash of each module zip the lab reads source from without Go (OCM's manifests, its API's
 * CRDs), as `go mod download` recorded them (the module cache's .ziphash). A module not here needs Go.
 */
export const MODULE_ZIP_HASHES: Readonly<Record<string, string>> = {
  'open-cluster-management.io/ocm@v1.2.1': 'h1:JC1mrIkaNjJ+AmLjiQ/sIhUE6Uzb3JVXFlFbaZF5+VY=',
  'open-cluster-management.io/api@v1.2.0': 'h1:+yeQgJiErrur5S4s205UM37EcZ2XbC9pFSm0xgV5/hU=',
  'open-cluster-management.io/api@v1.3.0': 'h1:Q3miH38BE3N5+PesHQ0kcFi5nhX5350m7OJWapZcVqY=',
};
