#!/usr/bin/env bash
# The kind runtime end to end, on a machine with Debian's docker.io: the test
# starts its own Docker engine (and stops it), prepares the offline images,
# brings the default lab up on kind, checks the VPC rule both ways, runs the
# conformance suite and brings the lab down. Ends with "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lts-node.sh
source scripts/ocm-source.sh
OCM_LAB_DOCKER=1 scripts/bootstrap.sh
exec npx vitest run --project kind "$@"
