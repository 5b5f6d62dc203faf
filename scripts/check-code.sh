#!/usr/bin/env bash
# The code checks of `npm test` (issue 29), each a few seconds to half a minute:
# formatting (Prettier), line width, lint (typescript-eslint, type-aware) and unused exports (knip).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== format (prettier --check)"
npx prettier --check --log-level warn .
echo "== lines of src/ at most 160 characters (Prettier does not wrap strings and comments)"
if long=$(grep -rnE '.{161,}' src --include='*.ts'); then
  printf '%s\n' "$long" | cut -c1-200 >&2
  echo "check-code: the lines above are over 160 characters; split the string or comment" >&2
  exit 1
fi
echo "== lint (eslint)"
npx eslint --max-warnings 0 src test vitest.config.ts
echo "== unused exports (knip)"
npx knip --no-progress
echo "code checks passed"
