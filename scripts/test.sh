#!/usr/bin/env bash
# The whole test suite: unit tests, then end-to-end tests against real labs
# (real kube-apiserver, etcd, kube-controller-manager; root for network namespaces).
set -euo pipefail
cd "$(dirname "$0")/.."
# The tests run on a Node.js LTS (22 or newer): the one on PATH, else the pinned one from the npm registry.
source scripts/lts-node.sh
# OCM v1.3.1 from its source archive where the machine has one ($OCM_LAB_OCM_SOURCE; scripts/ocm-source.sh).
source scripts/ocm-source.sh
OCM_LAB_TESTS=1 scripts/bootstrap.sh
# vitest runs TypeScript without checking types: the tests are type-checked (strict) here.
npx tsc -p tsconfig.test.json
# Format, line width, lint and unused exports before any lab is started (scripts/check-code.sh, docs/ci.md).
scripts/check-code.sh
# The kind runtime has its own command (npm run test:kind): a Docker engine, ~15 min with a warm build
# cache, about 25 min of builds more on a fresh machine (docs/kind.md, "Lifecycle").
# Labs of the e2e and faults files run on the local runtime even where a Docker engine answers:
# vitest.config.ts pins OCM_LAB_RUNTIME=local in those projects.
exec npx vitest run --project unit --project e2e --project faults "$@"
