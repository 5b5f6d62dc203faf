#!/usr/bin/env bash
# The connected path in a simulated connected world (test/support/connected-world), as root: Debian's
# docker-registry answers as quay.io, registry.k8s.io and registry-1.docker.io, an HTTPS file server as
# dl.k8s.io and GitHub's release downloads, both on loopback, resolved only inside a private mount
# namespace. Serves binaries built here, so it needs the shared cache filled first (`ocm-lab setup`).
set -euo pipefail
cd "$(dirname "$0")/.."
# A Node.js LTS, as scripts/test.sh: the images the world serves (node:24-bookworm-slim among them) are built with it.
source scripts/lts-node.sh
source scripts/ocm-source.sh
OCM_LAB_CONNECTED=1 scripts/bootstrap.sh
exec npx vitest run --project connected "$@"
