#!/usr/bin/env bash
# The developers' fast loop (docs/ci.md, "test:quick"): the type check, the code checks, the unit tests and
# one smoke on a shared lab (the default lab up, every document through conformance, down clean).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lts-node.sh
OCM_LAB_TESTS=1 scripts/bootstrap.sh
npx tsc -p tsconfig.test.json
scripts/check-code.sh
exec npx vitest run --project unit --project e2e test/unit test/e2e/conformance.test.ts test/e2e/shared-labs-down.test.ts "$@"
