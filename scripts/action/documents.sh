#!/usr/bin/env bash
# The action's documents step: the user's documents (files or folders of .md), then ocm-lab's own when
# INPUT_CONFORMANCE is true, each set with its JUnit file, an HTML report beside it (the lab's picture,
# every document with its steps, outputs and timings), transcripts and a Markdown table for the job
# summary. Every set runs even when one before it failed; the step fails if any did.
set -uo pipefail
home="${RUNNER_TEMP:?}/ocm-lab"
ocm_lab="$home/bin/ocm-lab"
results="$home/results"
mkdir -p "$results"
echo "results=$results" >>"$GITHUB_OUTPUT"
failed=0

run_set() { # name, then conformance's own arguments
  local name="$1"
  shift
  "$ocm_lab" conformance --junit "$results/$name/junit.xml" --html "$results/$name/report.html" --summary "$results/$name/summary.md" --transcript "$results/$name/transcripts" "$@" || failed=1
  if [ -f "$results/$name/summary.md" ]; then
    { echo "### ocm-lab: $name"; cat "$results/$name/summary.md"; echo; } >>"$GITHUB_STEP_SUMMARY"
  fi
}

documents=(${INPUT_DOCUMENTS:-})
if [ "${#documents[@]}" -gt 0 ]; then
  dir="$home/documents"
  rm -rf "$dir"
  mkdir -p "$dir"
  for d in "${documents[@]}"; do
    if [ -d "$d" ]; then
      cp "$d"/*.md "$dir/" || { echo "::error title=ocm-lab::documents: no .md document in folder $d"; exit 2; }
    elif [ -f "$d" ]; then
      cp "$d" "$dir/"
    else
      echo "::error title=ocm-lab::documents: $d is neither a file nor a folder"
      exit 2
    fi
  done
  run_set documents --dir "$dir"
fi
[ "${INPUT_CONFORMANCE:-false}" != true ] || run_set conformance
exit "$failed"
