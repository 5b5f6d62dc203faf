#!/usr/bin/env bash
# The kind runtime end to end, on a machine with Debian's docker.io and podman:
# each case starts its own engine (a Docker engine; Podman with storage and
# networks of its own) and removes it, prepares the offline images, brings the
# default lab up on kind, checks the VPC rule both ways, runs the conformance
# suite and brings the lab down; one engine at a time. Ends with "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lts-node.sh
source scripts/ocm-source.sh
OCM_LAB_DOCKER=1 OCM_LAB_PODMAN=1 scripts/bootstrap.sh
exec npx vitest run --project kind "$@"
