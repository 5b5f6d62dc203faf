# Sourced by the test scripts and .ci/run: OCM v1.3.1's source archive, where this machine has one beside
# the checkout (../shared/upstream/, the project's machines), becomes $OCM_LAB_OCM_SOURCE. The Go module
# proxy refuses that version's source, so labs on v1.3.1 (OCM_LAB_TEST_OCM_VERSION=v1.3.1, --ocm-version
# v1.3.1) are built from the archive, held to its pinned sha256 (docs/provisioning.md, "Mirrors"). Labs on
# other OCM versions ignore the variable. A value already set is kept; nothing is set without the file.
ocm_lab_ocm_source="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/../shared/upstream/ocm-v1.3.1-src.tar.gz"
if [ -z "${OCM_LAB_OCM_SOURCE:-}" ] && [ -f "$ocm_lab_ocm_source" ]; then
  OCM_LAB_OCM_SOURCE="$(cd "$(dirname "$ocm_lab_ocm_source")" && pwd)/$(basename "$ocm_lab_ocm_source")"
  export OCM_LAB_OCM_SOURCE
fi
unset ocm_lab_ocm_source
