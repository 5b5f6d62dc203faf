#!/usr/bin/env bash
# The developers' fast loop (docs/contributing.md): the type check, the code checks, the unit tests and one smoke
# on the shared default lab (up with the default addons, every addon process running, down leaving nothing).
# Every document through conformance is npm test's (test/e2e/conformance.test.ts, about 4 minutes by itself).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lts-node.sh
OCM_LAB_TESTS=1 scripts/bootstrap.sh
npx tsc -p tsconfig.test.json
scripts/check-code.sh
exec npx vitest run --project unit --project e2e test/unit test/e2e/shared-labs-down.test.ts "$@"
