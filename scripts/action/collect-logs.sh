#!/usr/bin/env bash
# Copies what explains a failed lab into the folder given: `ocm-lab status`, the components' log files
# (never the lab's PKI or kubeconfigs) and, on kind, `kind export logs` of every cluster and `docker ps`.
# Used by the down action and by the conformance workflow, before `down` removes the lab's directory.
set -uo pipefail
out="${1:?usage: collect-logs.sh FOLDER}"
mkdir -p "$out"
ocm_lab="$(command -v ocm-lab || echo "$(dirname "$0")/../ocm-lab")"
"$ocm_lab" status >"$out/status.txt" 2>&1 || true
labs="${OCM_LAB_HOME:-${XDG_STATE_HOME:-$HOME/.local/state}/ocm-lab/labs}"
if [ -d "$labs" ]; then
  mkdir -p "$out/labs"
  (cd "$labs" && find . -path '*/logs/*' -type f -exec cp --parents {} "$out/labs/" \;) || true
fi
kind="$(find "${OCM_LAB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ocm-lab}/bin" -path '*/kind-*/kind' -type f 2>/dev/null | head -n 1)"
if [ -n "$kind" ]; then
  for cluster in $("$kind" get clusters 2>/dev/null); do
    "$kind" export logs "$out/kind/$cluster" --name "$cluster" || true
  done
  docker ps -a >"$out/docker-ps.txt" 2>&1 || true
fi
[ -z "${GITHUB_OUTPUT:-}" ] || echo "diagnostics=$out" >>"$GITHUB_OUTPUT"
