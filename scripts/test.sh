#!/usr/bin/env bash
# The whole test suite: unit tests, then end-to-end tests against real labs
# (real kube-apiserver, etcd, kube-controller-manager; root for network namespaces).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
exec npx vitest run "$@"
