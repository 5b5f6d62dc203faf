#!/usr/bin/env bash
# The code checks of `npm test` (issue 29), each a few seconds to half a minute:
# formatting (Prettier), lint (typescript-eslint, type-aware) and unused exports (knip).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== format (prettier --check)"
npx prettier --check --log-level warn .
echo "== lint (eslint)"
npx eslint --max-warnings 0 src test vitest.config.ts
echo "== unused exports (knip)"
npx knip --no-progress
