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
echo "== docs: no dated run on a concept page (dated runs belong in docs/measured/)"
# A heading that carries a date (2026-11-26) or a paragraph opening with "Run of" is a run log; the concept pages
# (docs/*.md and any folder but docs/measured/) keep the current figure and link to docs/measured/ (issue 42).
# Fenced code blocks are skipped: a "#" line there is a shell comment, not a heading.
# shellcheck disable=SC2016
if dated=$(find docs -name '*.md' -not -path 'docs/measured/*' -print0 | sort -z | xargs -0 awk '
  FNR == 1 { fence = 0 }
  /^[ \t]*(```|~~~)/ { fence = !fence; next }
  fence { next }
  /^#+[ \t].*[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]/ || /^Run of / { printf "%s:%d: %s\n", FILENAME, FNR, $0 }
'); [ -n "$dated" ]; then
  printf '%s\n' "$dated" | cut -c1-200 >&2
  echo "check-code: the lines above head a dated run on a concept page; move the run to docs/measured/" \
    "and leave the current figure with a link (docs/measured/README.md)" >&2
  exit 1
fi
echo "== lint (eslint)"
npx eslint --max-warnings 0 src test vitest.config.ts
echo "== unused exports (knip)"
npx knip --no-progress
echo "code checks passed"
